// Package vrun runs planned traffic in process against the embedded
// simulator on a virtual clock: a fresh sim.Server whose clock is a
// vclock.Loop, requests served on the calling goroutine (inproc), each
// planned send started at its time. The policy lab's runs and fit's
// replays are such runs: they plan the arrivals (burst, schedule, a
// recorded run), vrun plays them, and the outcome is a function of the
// plan and the simulator's settings alone, on any machine under any load.
//
// vrun is the only package that imports internal/vclock and
// internal/inproc (the map's rows and internal/archmap's test hold it
// to that): a new consumer of the virtual clock goes through Run.
package vrun
