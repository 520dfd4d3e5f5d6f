package rbm

import _ "embed" // the OpenAPI path items of the webhook routes

//go:embed openapi.json
var openAPI []byte
