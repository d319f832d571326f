// Package routers shows negotiate/a2ahttp and negotiate/mcphttp mounted
// in routers people use, chi and echo, in front of the real SDK handlers
// (the MCP go-sdk's streamable handler, a2a-go's JSON-RPC handler), and
// measures what the middleware adds to one request in process.
//
// Both adapters' Middleware.Wrap is a func(http.Handler) http.Handler, so
// chi takes it as it is (r.Use(m.Wrap)) and echo through
// echo.WrapMiddleware(m.Wrap). The wiring is the same five lines in every
// router: New, its error, and Use. Its safe defaults are the zero Options
// but Sink: every caller is unauthenticated, so none is served below the
// preferred version, and every decision is recorded as a durable host
// event.
package routers
