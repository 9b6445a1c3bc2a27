package sim

import (
	"io"
	"log"
)

// discardLogger silences net/http's own error log: its messages can carry
// client addresses and request details, and the simulator logs nothing
// that could hold a key or prompt.
func discardLogger() *log.Logger { return log.New(io.Discard, "", 0) }
