package tools

import (
	"encoding/json"
	"fmt"

	"github.com/google/jsonschema-go/jsonschema"
)

// argsSchema returns the JSON Schema of a tool's arguments from Args, the
// struct its Run decodes them into, so that an argument added to the
// struct is offered to the model: an object with a property for each
// field (none for an empty struct), named by its json tag and described
// by its jsonschema tag, required unless the json tag says omitempty, and
// no other property.
//
// The fields are pointers only so that Run tells an argument left out
// from one given empty (a null counts as left out); the schema offers
// the value's type alone, without null, as the model is to send it.
//
// It panics when Args cannot be described, as a mistake in a tool's
// declaration that every test of the package meets: call it once, in a
// package-level variable.
func argsSchema[Args any]() json.RawMessage {
	s, err := jsonschema.For[Args](nil)
	if err != nil {
		panic(fmt.Sprintf("tools: the schema of %T: %v", *new(Args), err))
	}
	for name, p := range s.Properties {
		if len(p.Types) != 2 || p.Types[0] != "null" {
			panic(fmt.Sprintf("tools: the schema of %T: argument %q is not a pointer to a value of one type", *new(Args), name))
		}
		p.Type, p.Types = p.Types[1], nil
	}
	if s.Properties == nil {
		// A tool of no arguments: "properties" still, which
		// approval.Offer adds its own to.
		s.Properties = map[string]*jsonschema.Schema{}
	}
	b, err := json.Marshal(s)
	if err != nil {
		panic(fmt.Sprintf("tools: the schema of %T: %v", *new(Args), err))
	}
	return b
}
