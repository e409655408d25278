// Command agentmem-eval measures how well the library's recall finds the
// evidence of LoCoMo's questions, on any file in LoCoMo's format.
//
// Each conversation gets a fresh store of its own. Its turns are added in
// time order through backend.Store.Add, as memory.NewTurn records: the
// first speaker (speaker_a) as role user, the second (speaker_b) as role
// assistant, content "<speaker>: <text>", created at the session's date
// time plus one second per turn before it in the session, and the turn's
// dia_id in the metadata key "dia_id". Each question is then asked, as
// written, through the mode's recall at the session level for the 20
// best records; the time of that call alone is the recall latency.
// Only the conversations' turns and the questions are read: the file's
// summaries and observations (annotations) never are.
//
// A question hits at k when any of its evidence turns is among the first
// k records recalled. The command reports, per LoCoMo category (1 to 4,
// the four together, 5 apart, and all five), the number of questions
// scored, Hit@1, Hit@5, Hit@10, Hit@20 and the mean reciprocal rank of the
// first evidence turn (a question with none in the top 20 counts 0), then
// the p50 and p95 recall latency. "overall" means categories 1 to 4:
// category 5 is LoCoMo's adversarial questions, whose answers are not in
// the conversation, and is reported apart. The last line of standard
// output is the summary, with three decimals:
//
//	overall hit@1=0.410 hit@5=0.700 hit@10=0.800 hit@20=0.860 mrr=0.550
//
// A question without evidence, or with an evidence id that names no turn
// of its conversation (such as "D1:4; D2:7", two ids in one string), is
// skipped, named in a warning and counted in the report; -strict makes it
// an error. A progress line is kept on standard error while the command
// runs.
//
// Usage:
//
//	go run ./cmd/agentmem-eval [-data FILE] [-mode lexical|text|hybrid-hash] [-driver inmem|sqlite|fs|qdrant] [-strict] [-quiet]
//	    [-candidates N] [-neighbours N] [-neighbour-weight W] [-speaker-boost W] [-session-weight W] [-date-boost W] [-question-penalty W]
//	    [-recency-half-life D] [-recency-weight W] [-diversity W] [-fusion score|rank]
//
// The last eleven set the lexical mode's recall.Options, for measuring what
// each technique adds; left out, each is the library's default.
//
// Without -data the command reads ../shared/eval/locomo-dev.json, or
// /work/shared/eval/locomo-dev.json when that does not exist.
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"os/signal"
	"slices"
	"strings"
	"time"

	"github.com/agentmem/memory/backend"
	"github.com/agentmem/memory/backend/inmem"
	"github.com/agentmem/memory/recall"
)

// defaultData are the data files tried, in order, when -data is not given.
var defaultData = []string{"../shared/eval/locomo-dev.json", "/work/shared/eval/locomo-dev.json"}

// progressEvery is how often the progress line is rewritten at most.
const progressEvery = 200 * time.Millisecond

// main runs the command until it ends or is interrupted.
func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt)
	code := run(ctx, os.Args[1:], os.Stdout, os.Stderr)
	stop()
	os.Exit(code)
}

// run is the command: it parses args, evaluates, writes the report to
// stdout and progress and errors to stderr, and returns the exit status:
// 0 on success, 1 on failure, 2 for bad usage.
func run(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	fs := flag.NewFlagSet("agentmem-eval", flag.ContinueOnError)
	fs.SetOutput(stderr)
	data := fs.String("data", "", "the LoCoMo-format `FILE` (default "+strings.Join(defaultData, ", or else ")+")")
	mode := fs.String("mode", "lexical", "the recall `mode`: "+listChoices(modeNames(), func(n string) string { return modes[n].about }))
	drv := fs.String("driver", "inmem", "the storage `driver`: "+listChoices(driverNames(), func(n string) string { return drivers[n].about }))
	strict := fs.Bool("strict", false, "fail on a question without evidence or with an evidence id that names no turn, instead of skipping it")
	quiet := fs.Bool("quiet", false, "no progress line and no warnings on standard error")
	var opt recall.Options
	fs.IntVar(&opt.Candidates, "candidates", 0, "recall.Options.Candidates of the lexical mode (0: the library's default)")
	fs.IntVar(&opt.Neighbours, "neighbours", 0, "recall.Options.Neighbours of the lexical mode (0: the default, negative: none)")
	fs.Float64Var(&opt.NeighbourWeight, "neighbour-weight", 0, "recall.Options.NeighbourWeight of the lexical mode (0: the default)")
	fs.Float64Var(&opt.SpeakerBoost, "speaker-boost", 0, "recall.Options.SpeakerBoost of the lexical mode (0: the default, negative: none)")
	fs.Float64Var(&opt.SessionWeight, "session-weight", 0, "recall.Options.SessionWeight of the lexical mode (0: the default, negative: none)")
	fs.Float64Var(&opt.DateBoost, "date-boost", 0, "recall.Options.DateBoost of the lexical mode (0: the default, negative: none)")
	fs.Float64Var(&opt.QuestionPenalty, "question-penalty", 0, "recall.Options.QuestionPenalty of the lexical mode (0: the default, negative: none)")
	fs.DurationVar(&opt.RecencyHalfLife, "recency-half-life", 0, "recall.Options.RecencyHalfLife of the lexical mode (0: no recency); ages count to the newest turn of the conversation")
	fs.Float64Var(&opt.RecencyWeight, "recency-weight", 0, "recall.Options.RecencyWeight of the lexical mode (0: the default)")
	fs.Float64Var(&opt.Diversity, "diversity", 0, "recall.Options.Diversity of the lexical mode (0: none)")
	fusion := fs.String("fusion", "score", "recall.Options.Fusion of the hybrid modes: score (ScoreFusion, the default) or rank (RankFusion)")
	fs.Usage = func() {
		fmt.Fprint(fs.Output(), `usage: agentmem-eval [flags]

Runs the LoCoMo evidence-retrieval evaluation: one fresh store per
conversation, its turns added in time order, every question asked as
written for the 20 best records. Reports, per category, Hit@1/5/10/20 and
MRR (reciprocal rank of the first evidence turn, 0 beyond rank 20), and the
p50/p95 latency of the recall call. "overall" is categories 1-4 together;
category 5 (adversarial) is reported apart. The last line of standard
output is the summary:
  overall hit@1=0.410 hit@5=0.700 hit@10=0.800 hit@20=0.860 mrr=0.550
Questions without evidence, or with an evidence id that names no turn of
their conversation, are skipped, named on standard error and counted.

Flags:
`)
		fs.PrintDefaults()
	}
	if err := fs.Parse(args); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			return 0
		}
		return 2
	}
	if fs.NArg() > 0 {
		fmt.Fprintf(stderr, "agentmem-eval: unexpected arguments %q; the data file is given with -data\n", fs.Args())
		return 2
	}
	m, ok := modes[*mode]
	if !ok {
		fmt.Fprintf(stderr, "agentmem-eval: unknown mode %q; the modes are %s\n", *mode, strings.Join(modeNames(), ", "))
		return 2
	}
	d, ok := drivers[*drv]
	if !ok {
		fmt.Fprintf(stderr, "agentmem-eval: unknown driver %q; the drivers are %s\n", *drv, strings.Join(driverNames(), ", "))
		return 2
	}
	path := *data
	if path == "" {
		var err error
		if path, err = findData(defaultData); err != nil {
			fmt.Fprintf(stderr, "agentmem-eval: %v\n", err)
			return 1
		}
	}
	ds, err := LoadFile(path, MaxDataBytes)
	if err != nil {
		fmt.Fprintf(stderr, "agentmem-eval: %v\n", err)
		return 1
	}
	var progress *Progress
	if !*quiet {
		progress = NewProgress(stderr, progressEvery)
	}
	switch *fusion {
	case "rank":
		opt.Fusion = recall.RankFusion
	case "score":
		opt.Fusion = recall.ScoreFusion
	default:
		fmt.Fprintf(stderr, "agentmem-eval: unknown fusion %q; it is rank or score\n", *fusion)
		return 2
	}
	// Bad recall options are bad usage: refuse them before reading any data.
	if _, err := recall.New(backend.NewStore(inmem.New(inmem.Options{}), backend.StoreOptions{}), opt); err != nil {
		fmt.Fprintf(stderr, "agentmem-eval: %v\n", err)
		return 2
	}
	e := &Evaluator{Open: d.open, Recall: m.recall(opt), Prepare: m.prepare, Strict: *strict, Progress: progress}
	report, err := e.Run(ctx, ds)
	progress.Done()
	if err != nil {
		fmt.Fprintf(stderr, "agentmem-eval: %v\n", err)
		return 1
	}
	heading := fmt.Sprintf("agentmem-eval: mode %s, driver %s, data %s", *mode, *drv, path)
	if err := report.Write(stdout, heading); err != nil {
		fmt.Fprintf(stderr, "agentmem-eval: writing the report: %v\n", err)
		return 1
	}
	return 0
}

// findData returns the first of paths that exists, or an error naming
// them all.
func findData(paths []string) (string, error) {
	for _, p := range paths {
		if _, err := os.Stat(p); err == nil {
			return p, nil
		}
	}
	return "", fmt.Errorf("no data file: none of %s exists; give one with -data FILE", strings.Join(paths, ", "))
}

// modeNames returns the names of the modes, sorted.
func modeNames() []string {
	names := make([]string, 0, len(modes))
	for n := range modes {
		names = append(names, n)
	}
	slices.Sort(names)
	return names
}

// driverNames returns the names of the drivers, sorted.
func driverNames() []string {
	names := make([]string, 0, len(drivers))
	for n := range drivers {
		names = append(names, n)
	}
	slices.Sort(names)
	return names
}

// listChoices lists names with what each is.
func listChoices(names []string, about func(string) string) string {
	parts := make([]string, len(names))
	for i, n := range names {
		parts[i] = n + " (" + about(n) + ")"
	}
	return strings.Join(parts, "; ")
}
