package main

import (
	"context"
	"io"
	"math"
	"strings"
	"testing"

	"github.com/vouchkit/vouch/reputation"
)

// TestSimulateWorlds_leadMargin checks that -lead-margin reaches the
// reputation books: with half the outcomes reported, a lead margin of 1,
// which no reliability clears, leads later than the default, and the
// figures with reputation on move; the flag names itself on the command
// line.
func TestSimulateWorlds_leadMargin(t *testing.T) {
	t.Parallel()
	llmbar, _ := parseFamilies("llmbar")
	cfg := worldsCfg
	cfg.families, cfg.outcomes = llmbar, []float64{0.5}
	def, err := simulateWorlds(context.Background(), cfg, io.Discard)
	if err != nil {
		t.Fatal(err)
	}
	cfg.book.LeadMargin = 1
	off, err := simulateWorlds(context.Background(), cfg, io.Discard)
	if err != nil {
		t.Fatal(err)
	}
	if _, moved := movedCells(t, def.results["llmbar"][0], off.results["llmbar"][0]); moved == 0 {
		t.Error("-lead-margin 1 moved no figure with reputation on")
	}
	if cmd := off.command(); !strings.Contains(cmd, "-lead-margin 1") {
		t.Errorf("the command line lacks -lead-margin 1: %s", cmd)
	}
}

// TestSimulateWorlds_bookOptions checks that -horizon and -lead-level
// reach the reputation books (a horizon of one vote forgets what the
// default keeps; at a lead level of 1/2 a session leads on a shorter
// record: either way the figures with reputation on move) and leave
// reputation off as it is, that each names itself on the command line,
// and that the configuration refuses a bad one, one without the
// families, or -drift without the families.
func TestSimulateWorlds_bookOptions(t *testing.T) {
	t.Parallel()
	llmbar, _ := parseFamilies("llmbar")
	for _, c := range []struct {
		name string
		set  func(*config)
		flag string
	}{
		{"horizon", func(c *config) { c.book.Horizon = 1 }, "-horizon 1"},
		{"lead level", func(c *config) { c.book.LeadLevel = 0.5 }, "-lead-level 0.5"},
	} {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			cfg := worldsCfg
			cfg.families = llmbar
			c.set(&cfg)
			got, err := simulateWorlds(context.Background(), cfg, io.Discard)
			if err != nil {
				t.Fatal(err)
			}
			if _, moved := movedCells(t, smallWorlds(t).results["llmbar"][0], got.results["llmbar"][0]); moved == 0 {
				t.Errorf("%s moved no figure with reputation on", c.flag)
			}
			if cmd := got.command(); !strings.Contains(cmd, c.flag) {
				t.Errorf("the command line lacks %s: %s", c.flag, cmd)
			}
		})
	}
	for _, c := range []struct {
		cfg  config
		want string
	}{
		{config{families: llmbar, seeds: []uint64{1}, panels: 1, book: reputation.Options{Horizon: -1}}, "-horizon must be a number from 0"},
		{config{families: llmbar, seeds: []uint64{1}, panels: 1, book: reputation.Options{Horizon: math.NaN()}}, "-horizon must be a number from 0"},
		{config{book: reputation.Options{Horizon: 2000}}, "-horizon: the horizon is set on the world families"},
		{config{families: llmbar, seeds: []uint64{1}, panels: 1, book: reputation.Options{LeadLevel: -1}}, "-lead-level must be a number from 0 to 1/2"},
		{config{families: llmbar, seeds: []uint64{1}, panels: 1, book: reputation.Options{LeadLevel: 0.75}}, "-lead-level must be a number from 0 to 1/2"},
		{config{families: llmbar, seeds: []uint64{1}, panels: 1, book: reputation.Options{LeadLevel: math.NaN()}}, "-lead-level must be a number from 0 to 1/2"},
		{config{book: reputation.Options{LeadLevel: 0.5}}, "-lead-level: the lead level is set on the world families"},
		{config{families: llmbar, seeds: []uint64{1}, panels: 1, book: reputation.Options{LeadMargin: -0.1}}, "-lead-margin must be a number from 0 to 1"},
		{config{families: llmbar, seeds: []uint64{1}, panels: 1, book: reputation.Options{LeadMargin: math.NaN()}}, "-lead-margin must be a number from 0 to 1"},
		{config{book: reputation.Options{LeadMargin: 1}}, "-lead-margin: the lead margin is set on the world families"},
		{config{drift: true}, "-drift: the world families drift"},
		{config{families: llmbar, seeds: []uint64{1}, panels: 1, forget: true}, "-forget: the host forgets the sessions that drift swaps"},
	} {
		if err := c.cfg.check(); err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%+v: error %v, want one saying %q", c.cfg, err, c.want)
		}
	}
}
