package httpapi

// docsRoutes registers GET /v1/openapi.json and GET /docs.
func (s *Server) docsRoutes() {}
