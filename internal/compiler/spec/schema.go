package spec

import _ "embed"

// Schema is the JSON Schema (draft 2020-12) of the spec language, for
// editors such as yaml-language-server. fsmgen schema prints it.
//
//go:embed schema.json
var Schema []byte
