package check

import (
	"time"

	"github.com/livecheck/livecheck/internal/cputime"
)

// A Phase is the time one phase of a check took: its wall time, and the
// CPU time the process used meanwhile (on every core, the collector's
// included; 0 where the system does not say), whose ratio is how many
// cores the phase kept busy on average. A phase met twice (the walks,
// between two critical searches) adds up in one.
type Phase struct {
	Name      string
	Wall, CPU time.Duration
	// Serial is the part of Wall the phase spent, by design, on fewer
	// goroutines than it has workers: for the search, the merges of its
	// levels (deduplicating a level's new states and adding them), which
	// run between the levels' expansions. It is what keeps a phase from
	// scaling with the workers however many cores there are.
	Serial time.Duration
}

// Cores is how many cores the phase kept busy on average: 1 for a phase
// that ran on one core throughout (or 0 when the CPU time is not known).
func (p Phase) Cores() float64 {
	if p.Wall <= 0 {
		return 0
	}
	return p.CPU.Seconds() / p.Wall.Seconds()
}

// The phases of a check, in the order they first run.
const (
	phSetup    = "setup"       // the model, the world, the initial states, a prefix's replay
	phSearch   = "search"      // the exhaustive search
	phRegion   = "dead-region" // a closed dead region's diagnosis
	phWalks    = "walks"       // the walks from the periphery and the dead tests of their suspects
	phCritical = "critical"    // the critical-transition searches
	phLocal    = "local"       // local mode's search and verification
	phReplay   = "replay"      // the replays that confirm a finding
	phShorten  = "shorten"     // a dead path's shortening
	phSlip     = "slip"        // the slip and the odds of recovery
)

// A phaseClock splits a check's time among its phases: at every moment
// exactly one phase is under way, so the phases add up to the check's
// time (Total).
type phaseClock struct {
	cur    int // index into phases of the phase under way, -1: none
	wall0  time.Time
	cpu0   time.Duration
	phases []Phase
	total  time.Duration
}

func newPhaseClock() *phaseClock {
	p := &phaseClock{cur: -1}
	p.to(phSetup)
	return p
}

// to ends the phase under way and starts phase name.
func (p *phaseClock) to(name string) {
	now := time.Now()
	cpu, _ := cputime.Process()
	if p.cur >= 0 {
		ph := &p.phases[p.cur]
		wall := now.Sub(p.wall0)
		ph.Wall += wall
		ph.CPU += max(cpu-p.cpu0, 0)
		p.total += wall
	}
	p.cur = -1
	if name != "" {
		for i := range p.phases {
			if p.phases[i].Name == name {
				p.cur = i
			}
		}
		if p.cur < 0 {
			p.phases = append(p.phases, Phase{Name: name})
			p.cur = len(p.phases) - 1
		}
	}
	p.wall0, p.cpu0 = now, cpu
}

// serial adds d to the phase under way's Serial.
func (p *phaseClock) serial(d time.Duration) {
	if p.cur >= 0 {
		p.phases[p.cur].Serial += d
	}
}

// stop ends the phase under way and returns the phases and their total.
func (p *phaseClock) stop() ([]Phase, time.Duration) {
	p.to("")
	return append([]Phase(nil), p.phases...), p.total
}
