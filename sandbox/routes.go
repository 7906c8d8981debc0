package sandbox

import (
	"net/http"
	"strings"
	"time"
)

// statusWriter remembers the status for the access log. Unwrap keeps
// http.ResponseController (hijack, deadlines) working through it.
type statusWriter struct {
	http.ResponseWriter
	code int
}

func (w *statusWriter) WriteHeader(code int) {
	if w.code == 0 {
		w.code = code
	}
	w.ResponseWriter.WriteHeader(code)
}

func (w *statusWriter) Write(b []byte) (int, error) {
	if w.code == 0 {
		w.code = http.StatusOK
	}
	return w.ResponseWriter.Write(b)
}

func (w *statusWriter) Unwrap() http.ResponseWriter { return w.ResponseWriter }

func (s *Sandbox) routes() http.Handler {
	api := http.NewServeMux()
	for _, m := range uploadMethods {
		api.Handle(m.HTTPMethod+" "+m.Pattern, s.uploadHandler(m))
	}
	s.gmailRoutes(api)
	s.gmailMetadataRoutes(api)
	s.mirrorRoutes(api)
	s.storageRoutes(api)
	api.HandleFunc("GET /sandbox/v1/stats", func(w http.ResponseWriter, r *http.Request) { writeJSON(w, 200, s.Stats()) })
	api.HandleFunc("GET /sandbox/v1/faults", s.serveFaults)
	api.HandleFunc("PUT /sandbox/v1/faults", s.serveFaults)
	api.HandleFunc("POST /sandbox/v1/faults", s.serveFaults)
	oauth := s.oauthRoutes() // needs no bearer token: it is where tokens come from

	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		s.stats.requests.Add(1)
		start := time.Now()
		sw := &statusWriter{ResponseWriter: w}
		defer func() {
			// The path only: the query of a session URI is a credential.
			s.log.Info("request", "method", r.Method, "path", r.URL.Path, "status", sw.code, "ms", time.Since(start).Milliseconds())
		}()
		w.Header().Set("Server", "carrier-sandbox")
		if strings.HasPrefix(r.URL.Path, "/upload/") && r.URL.Query().Has("upload_id") {
			s.serveSession(sw, r)
			return
		}
		if h, pattern := oauth.Handler(r); pattern != "" {
			h.ServeHTTP(sw, r)
			return
		}
		if !s.authorized(r) {
			writeError(sw, errUnauthenticated)
			return
		}
		if _, pattern := api.Handler(r); pattern == "" {
			writeError(sw, s.noRoute(api, r))
			return
		} else if e := s.checkScope(r, pattern); e != nil {
			writeError(sw, e)
			return
		}
		api.ServeHTTP(sw, r)
	})
}

// noRoute tells a wrong method from a wrong path, in Google's JSON form.
func (s *Sandbox) noRoute(api *http.ServeMux, r *http.Request) *apiError {
	for _, m := range []string{http.MethodGet, http.MethodPost, http.MethodPut, http.MethodDelete} {
		if m == r.Method {
			continue
		}
		r2 := r.Clone(r.Context())
		r2.Method = m
		if _, p := api.Handler(r2); p != "" {
			return errorf(http.StatusMethodNotAllowed, "httpMethodNotAllowed", "%s is not allowed on %s", r.Method, r.URL.Path)
		}
	}
	return notFound("The sandbox serves nothing at %s. See PROTOCOL.md for the endpoints.", r.URL.Path)
}
