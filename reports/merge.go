package reports

import (
	"fmt"
	"io"
)

// Merge is what `livecheck merge` adds to a check's report: how the
// shards of a split check were combined.
type Merge struct {
	Shards     int      `json:"shards"`
	Files      []string `json:"files"`
	SplitDepth int      `json:"split_depth"`
	// StatesSum adds up the shards' counts of states; StatesUnion, when
	// UnionExact (every shard saved its fingerprints), counts the
	// distinct ones among them, which the report's states then are.
	StatesSum   int64 `json:"states_sum"`
	StatesUnion int64 `json:"states_union,omitempty"`
	UnionExact  bool  `json:"union_exact"`
	// PerShard is what each shard found, in the order given.
	PerShard []MergeShard `json:"per_shard"`
	// Violations is the shortest violation of each property, the one
	// the report shows first.
	Violations []MergeViolation `json:"violations"`
	// Problem says why the shards do not make one check, if they do not.
	Problem string `json:"problem,omitempty"`
}

// MergeShard is one shard's result in a merge.
type MergeShard struct {
	Shard      int    `json:"shard"`
	File       string `json:"file"`
	Result     string `json:"result"`
	States     int64  `json:"states"`
	Foreign    int64  `json:"foreign_states"`
	Periphery  int    `json:"periphery"`
	Walks      int    `json:"walks"`
	Complete   bool   `json:"complete"`
	Covered    int    `json:"covered_depth"`
	SplitDepth int    `json:"split_depth"`
	Property   string `json:"property,omitempty"`
	PathLen    int    `json:"path_length,omitempty"`
}

// MergeViolation is the shortest violation of one property among the
// shards: the shard that found it, and its trace's file name.
type MergeViolation struct {
	Result   string `json:"result"`
	Property string `json:"property"`
	Shard    int    `json:"shard"`
	PathLen  int    `json:"path_length"`
	Trace    string `json:"trace"`
}

// WriteMerge writes a merged report as text: the check's report, then
// how the shards were combined.
func WriteMerge(w io.Writer, c *Check) {
	WriteCheck(w, c, true)
	m := c.Merge
	if m == nil {
		return
	}
	fmt.Fprintln(w)
	split := "the search ended before it split: every shard searched the same"
	if m.SplitDepth >= 0 {
		split = "split at depth " + fmt.Sprint(m.SplitDepth)
	}
	fmt.Fprintf(w, "merged %s (%s): %s in all", Count(m.Shards, "shard"), split, Count(m.StatesSum, "state"))
	if m.UnionExact {
		fmt.Fprintf(w, ", %s distinct (the exact union of their fingerprints)\n", Thousands(m.StatesUnion))
	} else {
		fmt.Fprintf(w, " (states two shards reach count twice; --save-fingerprints gives the distinct count)\n")
	}
	var rows [][]string
	for _, s := range m.PerShard {
		v := ""
		if s.Property != "" {
			v = fmt.Sprintf("%s in %s", s.Property, Count(s.PathLen, "step"))
		}
		rows = append(rows, []string{fmt.Sprintf("%d/%d", s.Shard, m.Shards), s.File, s.Result, Thousands(s.States), Thousands(s.Periphery), Thousands(s.Walks), v})
	}
	Table(w, []string{"shard", "file", "result", "states", "periphery", "walks", "violation"}, rows)
	if len(m.Violations) > 1 {
		fmt.Fprintln(w, "shortest violation of each property:")
		for _, v := range m.Violations {
			fmt.Fprintf(w, "    %s of %s in %s (shard %d): %s\n", v.Result, v.Property, Count(v.PathLen, "step"), v.Shard, v.Trace)
		}
	}
}
