// Package archmap holds the tests that keep the repository true to its
// map, docs/ARCHITECTURE.md: every production import is one the map's
// import table allows, no production file imports a package the map keeps
// for tests, and no production function is longer than MaxFuncLines
// (MaxCmdFuncLines in cmd/). It reads the tree as text (go/parser) and is imported by nothing.
package archmap

// MaxFuncLines is the longest a production function may be, from its
// func keyword to its closing brace: past it, a function holds more than
// one step of what it does, and reads better split by meaning.
const MaxFuncLines = 80

// MaxCmdFuncLines is the longest a production function of cmd/ may be:
// a command reads its flags into a job and calls one package function,
// and a function of cmd/ longer than this holds logic that belongs in
// the package it calls.
const MaxCmdFuncLines = 60
