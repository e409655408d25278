// Package working is keyed JSON working memory: the state one step of an
// agent leaves for the next, and the data a platform shares with its
// tenants, kept as rows of memory_key, a memory_type label and any JSON
// payload (memory_json). It implements the "Agent Memory" origin document
// (004_ebe2120e5c0a92a4.txt among the seeds in ../shared/seeds/); "the
// document" in this package means that one.
//
// A Memory (New) stores each row at one of six scope levels, Levels:
// SQUAD_AGENT_RUN (the default), SQUAD_AGENT, AGENT_RUN, SQUAD_RUN, SQUAD
// and AGENT. A row keeps only the identity fields its level keys, as the
// document keys them: squad-scoped rows by tenant agent instance, squad
// and run where the level has them, AGENT rows by the parent agent alone;
// the tenant always. Put, Get, List, ListSquad and Delete read and write
// rows; Swap (versioned compare-and-swap) and Update (read, apply, retry
// on conflict) change them safely under concurrency; LoadMerged reads an
// AGENT key's platform defaults (under the store's system tenant, written
// with PutDefault) merged with the caller's tenant override by a rule
// registered per key (Replace, ShallowMerge, DeepMerge, MergeListByID,
// MergeAt). Squad listings never return AGENT rows.
//
//	mem, err := working.New(store, working.Options{})
//	mem.RegisterMerge("live_chat_vendors", working.MergeListByID("id"))
//	_, err = mem.Put(ctx, who, working.Document{Level: memory.LevelSquad, Key: "keywords", JSON: payload})
//	vendors, err := mem.LoadMerged(ctx, who, "live_chat_vendors")
//
// Rows are memory.KindDocument records kept in a *backend.Store, the one
// place scope is enforced: the caller's Identity decides what is written
// and what is visible, and a level whose identity fields are missing
// fails closed with memory.ErrIncompleteScope before anything is read or
// written. Any driver stores rows; Swap and Update need one with
// compare-and-swap (driver.Swapper).
//
// A Memory is safe for concurrent use, and every call honours a cancelled
// context.
package working
