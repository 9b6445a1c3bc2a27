// Package burst plans burst-shaped traffic: waves of requests fired at
// once (or spread evenly over a short window), a fixed gap between wave
// starts. It only decides when; dispatch sends.
//
// burst imports nothing from ptuprobe; Plan satisfies dispatch.Pacer
// structurally.
package burst
