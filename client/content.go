package client

import (
	"bytes"
	"errors"

	"github.com/ptuprobe/ptuprobe/internal/jsonscan"
)

// Which events of a stream carry content, each dialect's rule read in
// place by jsonscan: nothing is allocated, so an answer's cost does not
// grow with its length (BenchmarkReadStream).

// errSeen stops a scan once it has what it looks for.
var errSeen = errors.New("seen")

// nonEmptyString consumes the value at s and reports whether it is a
// string of at least one character.
func nonEmptyString(s *jsonscan.Scanner) (bool, error) {
	if s.Peek() != '"' {
		return false, s.Skip()
	}
	n, err := s.Chars()
	return n > 0, err
}

// nonEmptyArray consumes the value at s and reports whether it is an
// array of at least one element.
func nonEmptyArray(s *jsonscan.Scanner) (bool, error) {
	if s.Peek() != '[' {
		return false, s.Skip()
	}
	any := false
	err := s.Array(func(int) error {
		any = true
		return s.Skip()
	})
	return any, err
}

// eachObject calls member for each member of every object in the array
// at s (other elements, and a value that is no array, are passed over).
func eachObject(s *jsonscan.Scanner, member func(key []byte) error) error {
	if s.Peek() != '[' {
		return s.Skip()
	}
	return s.Array(func(int) error {
		if s.Peek() != '{' {
			return s.Skip()
		}
		return s.Object(member)
	})
}

// object calls member for each member of the object at s (a value that
// is no object is passed over).
func object(s *jsonscan.Scanner, member func(key []byte) error) error {
	if s.Peek() != '{' {
		return s.Skip()
	}
	return s.Object(member)
}

// chatContent reports whether a chat completion chunk (OpenAI's, Azure's)
// carries a token: a choice whose delta has a non-empty content, a tool
// call (delta.tool_calls), a non-empty refusal, or non-empty reasoning
// text (reasoning_content, reasoning: the generated tokens of servers
// that stream a model's thinking, as vLLM's benchmark counts them), or a
// legacy completion's non-empty text. A role-only chunk
// ("delta":{"role":"assistant","content":""}), Azure's prompt-filter
// chunk ("choices":[] with prompt_filter_results) and its content-filter
// chunk (an empty delta), and the usage chunk carry none.
func chatContent(data []byte) bool {
	if !bytes.Contains(data, []byte(`"choices"`)) {
		return false
	}
	s := jsonscan.New(data)
	found := false
	_ = object(&s, func(key []byte) error {
		if string(key) != "choices" {
			return s.Skip()
		}
		ok, err := choicesContent(&s)
		if found = ok; ok {
			return errSeen
		}
		return err
	})
	return found
}

// choicesContent consumes the value at s, a chunk's choices, and reports
// whether one of them carries content (chatContent's rule).
func choicesContent(s *jsonscan.Scanner) (bool, error) {
	found := false
	set := func(ok bool, err error) error {
		found = found || ok
		return err
	}
	err := eachObject(s, func(key []byte) error {
		switch string(key) {
		case "text":
			return set(nonEmptyString(s))
		case "delta":
			return object(s, func(key []byte) error {
				switch string(key) {
				case "content", "refusal", "reasoning_content", "reasoning":
					return set(nonEmptyString(s))
				case "tool_calls":
					return set(nonEmptyArray(s))
				}
				return s.Skip()
			})
		}
		return s.Skip()
	})
	return found, err
}

// chatCutContent is chatContent for an event longer than maxEventBytes,
// from its head: a chunk with a choice holding a delta or a text (only
// content makes one so long).
func chatCutContent(head []byte) bool {
	return bytes.Contains(head, []byte(`"choices"`)) && !bytes.Contains(head, []byte(`"choices":[]`)) &&
		(bytes.Contains(head, []byte(`"delta"`)) || bytes.Contains(head, []byte(`"text"`)))
}

// eventType is the raw value (quotes included, escapes kept) of the
// "type" member of the JSON object data, or nil: the event's name in the
// Messages and Responses APIs, whose events lead with it.
func eventType(data []byte) []byte {
	s := jsonscan.New(data)
	var typ []byte
	_ = object(&s, func(key []byte) error {
		if string(key) != "type" {
			return s.Skip()
		}
		if s.Peek() == '"' {
			typ, _ = s.Capture(s.Skip)
		}
		return errSeen
	})
	return typ
}

// anthropicContent reports whether a Messages API event carries a token:
// a content_block_delta (text, a tool call's JSON, thinking), never
// message_start, content_block_start, ping or message_delta.
func anthropicContent(data []byte) bool {
	return bytes.Contains(data, []byte("content_block_delta")) && string(eventType(data)) == `"content_block_delta"`
}

// responsesContent reports whether a Responses API event carries a
// token: response.output_text.delta, and likewise a refusal's, a function
// call's arguments' and reasoning text's deltas; never response.created,
// response.in_progress, the .added/.done events or response.completed.
func responsesContent(data []byte) bool {
	if !bytes.Contains(data, []byte(`.delta"`)) {
		return false
	}
	switch string(eventType(data)) {
	case `"response.output_text.delta"`, `"response.refusal.delta"`,
		`"response.function_call_arguments.delta"`, `"response.reasoning_text.delta"`:
		return true
	}
	return false
}

// geminiContent reports whether a streamGenerateContent chunk carries a
// token: a candidate whose content has a part with non-empty text (a
// thinking model's thought parts included) or a function call. A chunk
// with only usageMetadata, or a candidate with no parts (a finishReason
// alone), carries none.
func geminiContent(data []byte) bool {
	if !bytes.Contains(data, []byte(`"parts"`)) {
		return false
	}
	s := jsonscan.New(data)
	found := false
	_ = object(&s, func(key []byte) error {
		if string(key) != "candidates" {
			return s.Skip()
		}
		return eachObject(&s, func(key []byte) error {
			if string(key) != "content" {
				return s.Skip()
			}
			return object(&s, func(key []byte) error {
				if string(key) != "parts" {
					return s.Skip()
				}
				return eachObject(&s, func(key []byte) error {
					switch string(key) {
					case "text":
						ok, err := nonEmptyString(&s)
						if err == nil && ok {
							found = true
							return errSeen
						}
						return err
					case "functionCall":
						found = true
						return errSeen
					}
					return s.Skip()
				})
			})
		})
	})
	return found
}

// geminiCutContent is geminiContent for an event longer than
// maxEventBytes, from its head.
func geminiCutContent(head []byte) bool {
	return bytes.Contains(head, []byte(`"parts"`)) && (bytes.Contains(head, []byte(`"text"`)) || bytes.Contains(head, []byte(`"functionCall"`)))
}
