package embedding

import (
	"context"
	"errors"
	"slices"

	"github.com/agentmem/memory"
)

// Backfill gives a vector to every record visible to id at level that
// lacks one (of Options.Kinds, with content), in batches, and returns how
// many it gave. The scope is derived as backend.Store.List derives it.
// Records are listed once, when Backfill starts; it fails on the first
// batch that fails every try, with the records embedded so far kept, and
// stops with memory.ErrClosed when Close is called.
func (x *Indexer) Backfill(ctx context.Context, id memory.Identity, level memory.Level) (int, error) {
	return x.scan(ctx, id, level, false)
}

// Reembed gives every record visible to id at level (of Options.Kinds,
// with content) a vector of the Indexer's model, whether it has one or
// not, in batches, and returns how many it gave; it fails as Backfill
// does. It is the step of a re-embedding (see Indexer) to run for every
// scope, but works on any store whose model is the Indexer's.
func (x *Indexer) Reembed(ctx context.Context, id memory.Identity, level memory.Level) (int, error) {
	return x.scan(ctx, id, level, true)
}

func (x *Indexer) scan(ctx context.Context, id memory.Identity, level memory.Level, force bool) (int, error) {
	if err := x.enter(); err != nil {
		return 0, err
	}
	defer x.wg.Done()
	recs, err := x.s.List(ctx, id, memory.Query{Level: level, Kinds: x.opt.Kinds})
	if err != nil {
		return 0, err
	}
	if _, err := checkModel(ctx, x.s, x.model, roleIndex, 0); err != nil {
		return 0, err
	}
	recs = slices.DeleteFunc(recs, func(r memory.Record) bool { return !x.wants(r, force) })
	done := 0
	for chunk := range slices.Chunk(recs, x.opt.BatchSize) {
		if x.stopping() {
			return done, memory.Errorf(memory.ErrClosed, "embedding: the indexer was closed during the backfill")
		}
		n, err := x.batch(ctx, chunk, force)
		done += n
		if err != nil {
			if ctx.Err() != nil {
				return done, ctx.Err()
			}
			x.stats.failed.Add(int64(len(chunk) - n))
			if errors.Is(err, errStopping) {
				return done, memory.Errorf(memory.ErrClosed, "embedding: the indexer was closed during the backfill")
			}
			var me *modelError
			if errors.As(err, &me) {
				err = me.err
			}
			return done, err
		}
	}
	return done, nil
}

// FinishReembed ends a re-embedding this Indexer began (Options.Reembed):
// the store records the Indexer's model as its own, Querier serves it,
// and Indexers of the old model stay refused. Call it once Reembed has run
// for every scope holding vectors; vectors of scopes it missed stay the
// old model's. It does nothing when the model is already the store's, and
// is memory.ErrConflict when the store is being re-embedded with another
// model, or memory.ErrInvalidArgument without Options.Reembed.
func (x *Indexer) FinishReembed(ctx context.Context) error {
	if err := x.enter(); err != nil {
		return err
	}
	defer x.wg.Done()
	if x.role != roleReembed {
		return memory.Errorf(memory.ErrInvalidArgument, "embedding: FinishReembed needs an Indexer made with Options.Reembed")
	}
	for tries := 1; ; tries++ {
		info, rec, ok, err := readModel(ctx, x.s)
		if err != nil {
			return err
		}
		switch {
		case ok && info.Next == "" && info.Model == x.model:
			return nil
		case !ok || info.Next != x.model:
			return memory.Errorf(memory.ErrConflict, "embedding: the store is not being re-embedded with %q (its model record: %+v)", x.model, info)
		}
		err = writeModel(ctx, x.s, ModelInfo{Model: info.Next, Dims: info.Dims}, rec, rec.Version)
		if errors.Is(err, memory.ErrConflict) && tries < maxModelTries {
			continue
		}
		if err == nil {
			x.log.Info("embedding: re-embedding finished", "from", info.Model, "to", info.Next)
		}
		return err
	}
}
