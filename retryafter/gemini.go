package retryafter

import (
	"bytes"
	"encoding/json"
	"strconv"
	"strings"
)

// retryInfoType is the @type of a google.rpc.RetryInfo error detail.
const retryInfoType = "type.googleapis.com/google.rpc.RetryInfo"

// googleError is the least of a Google API error document (AIP-193) that
// holds its retry advice: {"error": {"details": [{"@type": …}, …]}}. Each
// detail is decoded on its own, so that one of another shape does not hide
// the RetryInfo.
type googleError struct {
	Error *struct {
		Details []json.RawMessage `json:"details"`
	} `json:"error"`
}

type googleDetail struct {
	Type       string          `json:"@type"`
	RetryDelay json.RawMessage `json:"retryDelay"`
}

// gemini is the retry advice of an error body.
type gemini struct {
	present bool    // a RetryInfo detail is in the body
	usable  bool    // and its retryDelay is a usable wait
	ms      float64 // that wait
}

// geminiAdvice reads the RetryInfo of a Google error body (Gemini, Vertex
// AI): a response with an error status (400 or more) whose body, at most
// MaxBody bytes, is a JSON error document, or an array of them (as
// streamGenerateContent answers). Its retryDelay is a protobuf Duration in
// JSON ("30s", "1.5s"). A RetryInfo whose retryDelay is missing or
// unreadable, or two that disagree, are present but not usable.
func geminiAdvice(status int, body []byte) gemini {
	var g gemini
	if status < 400 || len(body) == 0 || len(body) > MaxBody || !bytes.Contains(body, []byte("google.rpc.RetryInfo")) {
		return g
	}
	var docs []googleError
	if b := bytes.TrimLeft(body, " \t\r\n"); len(b) > 0 && b[0] == '[' {
		if json.Unmarshal(b, &docs) != nil {
			return g
		}
	} else {
		var doc googleError
		if json.Unmarshal(b, &doc) != nil {
			return g
		}
		docs = []googleError{doc}
	}
	ok := true
	first := -1.0
	for _, doc := range docs {
		if doc.Error == nil {
			continue
		}
		for _, raw := range doc.Error.Details {
			var d googleDetail
			if json.Unmarshal(raw, &d) != nil || d.Type != retryInfoType {
				continue
			}
			g.present = true
			var s string
			ms, valid := 0.0, json.Unmarshal(d.RetryDelay, &s) == nil
			if valid {
				ms, valid = protoDuration(s)
			}
			switch {
			case !valid:
				ok = false
			case first < 0:
				first = ms
			case ms != first:
				ok = false
			}
		}
	}
	if g.present && ok && first >= 0 {
		g.usable, g.ms = true, first
	}
	return g
}

// protoDuration reads a google.protobuf.Duration in its JSON form, in ms:
// decimal seconds with at most 9 fractional digits and the suffix "s"
// ("30s", "1.5s", "0.000001s"). A negative duration is no wait, nor is one
// over results.MaxWaitMS.
func protoDuration(s string) (float64, bool) {
	if len(s) < 2 || len(s) > 32 || s[len(s)-1] != 's' {
		return 0, false
	}
	num := s[:len(s)-1]
	whole, frac, hasFrac := strings.Cut(num, ".")
	if whole == "" || !allDigits(whole) || hasFrac && (frac == "" || len(frac) > 9 || !allDigits(frac)) {
		return 0, false
	}
	v, err := strconv.ParseFloat(num, 64)
	if err != nil || v*1000 > maxWaitMS {
		return 0, false
	}
	return v * 1000, true
}

func allDigits(s string) bool {
	for i := 0; i < len(s); i++ {
		if !isDigit(s[i]) {
			return false
		}
	}
	return true
}
