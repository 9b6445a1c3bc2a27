package memnet

import (
	"io"
	"net/http"
	"testing"
	"testing/synctest"
	"time"
)

// TestHTTPOverPipesUnderSynctest serves a handler that takes 30 s and sees
// the client wait exactly that long on the fake clock.
func TestHTTPOverPipesUnderSynctest(t *testing.T) {
	t.Parallel()
	synctest.Test(t, func(t *testing.T) {
		ln := Listen()
		srv := &http.Server{Handler: http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			time.Sleep(30 * time.Second)
			io.WriteString(w, "late")
		})}
		go srv.Serve(ln)
		tr := &http.Transport{DialContext: ln.DialContext}
		start := time.Now()
		resp, err := (&http.Client{Transport: tr}).Get("http://sim.invalid/")
		if err != nil {
			t.Fatal(err)
		}
		b, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		if string(b) != "late" || time.Since(start) != 30*time.Second {
			t.Fatalf("%q after %v", b, time.Since(start))
		}
		tr.CloseIdleConnections()
		srv.Close()
		if _, err := ln.DialContext(t.Context(), "tcp", "x"); err == nil {
			t.Fatal("dialed a closed listener")
		}
	})
}
