package redisstate

import (
	"context"
	"errors"
	"io"
	"runtime"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/ptuprobe/ptuprobe/admission"
	"github.com/ptuprobe/ptuprobe/internal/redisserver"
)

// endless writes head, then fill repeated, 256 MB at most or until the
// client stops reading.
func endless(head, fill string) redisserver.Answer {
	chunk := []byte(strings.Repeat(fill, 64<<10/len(fill)))
	return func(_ []string, w io.Writer) error {
		if _, err := io.WriteString(w, head); err != nil {
			return err
		}
		for range 256 << 20 / len(chunk) {
			if _, err := w.Write(chunk); err != nil {
				return err
			}
		}
		return nil
	}
}

// answerTo answers the command name with a, HELLO as an old Redis (so
// go-redis speaks RESP2) and anything else with +OK.
func answerTo(name string, a redisserver.Answer) redisserver.Answer {
	return func(cmd []string, w io.Writer) error {
		switch cmd[0] {
		case name:
			return a(cmd, w)
		case "HELLO":
			_, err := io.WriteString(w, "-ERR unknown command 'HELLO'\r\n")
			return err
		}
		_, err := io.WriteString(w, "+OK\r\n")
		return err
	}
}

func raw(s string) redisserver.Answer {
	return func(_ []string, w io.Writer) error { _, err := io.WriteString(w, s); return err }
}

// allocated is the bytes the process allocated while f ran.
func allocated(f func()) uint64 {
	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	f()
	runtime.ReadMemStats(&after)
	return after.TotalAlloc - before.TotalAlloc
}

// TestHostileRepliesAreFaults: a server that answers the handshake or a
// script with a reply announcing gigabytes, an endless line or endless
// nesting costs a call, not the host's memory: the read fails on the
// header (ErrReply), Check refuses the server, and a decision falls back,
// counted, warned of once, within its deadline.
func TestHostileRepliesAreFaults(t *testing.T) {
	for _, tc := range []struct {
		name   string
		answer redisserver.Answer
	}{
		{"HELLO answers an array of 2e9", raw("*2000000000\r\n")},
		{"HELLO answers a map of 1e9", raw("%1000000000\r\n")},
		{"HELLO answers an endless line", endless("+", "A")},
		{"HELLO answers nesting without end", endless("", "*1\r\n")},
		{"HELLO answers a bulk of 1e9", endless("$1000000000\r\n", "x")},
		{"EVALSHA answers a bulk of 1e9", answerTo("EVALSHA", endless("$1000000000\r\n", "x"))},
		{"EVALSHA answers an array of 2e9", answerTo("EVALSHA", raw("*2000000000\r\n"))},
		{"EVALSHA answers nesting without end", answerTo("EVALSHA", endless("", "*1\r\n"))},
	} {
		t.Run(tc.name, func(t *testing.T) {
			fake := redisserver.StartFake(t, tc.answer)
			var warned []error
			var mu sync.Mutex
			c, err := Open("redis://"+fake.Addr+"/0", "", Options{Deployment: "d", CallTimeout: heard,
				Warn: func(err error) { mu.Lock(); warned = append(warned, err); mu.Unlock() }})
			if err != nil {
				t.Fatal(err)
			}
			defer c.Close()
			var checkErr, slotErr, skipped error
			used := allocated(func() {
				checkErr = c.Check(context.Background())
				_, slotErr = c.Slot(context.Background(), time.Now(), time.Millisecond)
				_, skipped = c.Slot(context.Background(), time.Now(), time.Millisecond)
			})
			if used > 64<<20 {
				t.Errorf("%d MB allocated for a hostile reply", used>>20)
			}
			if !errors.Is(slotErr, ErrReply) || !errors.Is(skipped, errSkipped) {
				t.Errorf("calls: %v, then %v; want ErrReply, then none within Retry", slotErr, skipped)
			}
			if strings.HasPrefix(tc.name, "HELLO") && (!errors.Is(checkErr, ErrUnusable) || !strings.Contains(checkErr.Error(), ErrReply.Error()+": ")) {
				t.Errorf("Check: %v, want ErrUnusable saying what the reply was", checkErr)
			}
			mu.Lock()
			defer mu.Unlock()
			if len(warned) != 1 || c.Fallbacks() != 2 {
				t.Errorf("warnings %v, %d fallbacks; want one warning, two fallbacks", warned, c.Fallbacks())
			}
		})
	}
}

// TestAnswersFarAheadAreFaults: a store whose cooldown, retry slot or send
// slot is more than MaxAhead ahead is not keeping the state: each such
// answer is a fault, counted and warned of once, and the decision is the
// process's own.
func TestAnswersFarAheadAreFaults(t *testing.T) {
	t.Parallel()
	far := strconv.FormatInt(time.Now().Add(MaxAhead+time.Hour).UnixMicro(), 10)
	for _, tc := range []struct {
		name, reply string
		call        func(*Coordinator) error
	}{
		{"cooldown", "*2\r\n:" + far + "\r\n$0\r\n\r\n", func(c *Coordinator) error {
			_, _, err := c.Cooldown(context.Background(), time.Time{}, "")
			return err
		}},
		{"slot", ":" + far + "\r\n", func(c *Coordinator) error {
			_, err := c.Slot(context.Background(), time.Now(), time.Millisecond)
			return err
		}},
		{"pace", "*3\r\n:" + far + "\r\n:0\r\n:1\r\n", func(c *Coordinator) error {
			_, err := c.Pace(context.Background(), admission.PaceStep{Op: admission.PaceReserve, Now: time.Now(), Config: admission.DefaultPaceConfig()})
			return err
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			fake := redisserver.StartFake(t, answerTo("EVALSHA", raw(tc.reply)))
			var warnings int
			var mu sync.Mutex
			c, err := Open("redis://"+fake.Addr+"/0", "", Options{Deployment: "d", CallTimeout: heard, Warn: func(error) { mu.Lock(); warnings++; mu.Unlock() }})
			if err != nil {
				t.Fatal(err)
			}
			defer c.Close()
			if err := tc.call(c); err == nil || !strings.Contains(err.Error(), "ahead") {
				t.Errorf("an answer a day ahead: %v, want a fault", err)
			}
			mu.Lock()
			defer mu.Unlock()
			if warnings != 1 || c.Fallbacks() != 1 {
				t.Errorf("%d warnings, %d fallbacks; want 1 and 1", warnings, c.Fallbacks())
			}
		})
	}
}
