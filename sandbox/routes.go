package sandbox

import (
	"io"
	"net"
	"net/http"
	"strings"
	"time"
)

// statusWriter remembers the status for the access log. Unwrap keeps
// http.ResponseController (hijack, deadlines) working through it.
type statusWriter struct {
	http.ResponseWriter
	code int
	body *guardedBody
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
	s.scopes = map[string]routeAccess{}
	for _, m := range uploadMethods {
		s.handle(api, m.HTTPMethod+" "+m.Pattern, routeAccess{scopes: methodScopes[m.Name]}, s.uploadHandler(m))
	}
	s.gmailRoutes(api)
	s.gmailMetadataRoutes(api)
	s.mirrorRoutes(api)
	s.storageRoutes(api)
	s.driveRoutes(api)
	s.photosRoutes(api)
	static := routeAccess{staticOnly: true}
	s.handle(api, "GET /sandbox/v1/stats", static, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { writeJSON(w, 200, s.Stats()) }))
	s.handle(api, "GET /sandbox/v1/faults", static, http.HandlerFunc(s.serveFaults))
	s.handle(api, "PUT /sandbox/v1/faults", static, http.HandlerFunc(s.serveFaults))
	s.handle(api, "POST /sandbox/v1/faults", static, http.HandlerFunc(s.serveFaults))
	s.handle(api, "GET /sandbox/v1/auth", static, http.HandlerFunc(s.serveAuthControl))
	s.handle(api, "PUT /sandbox/v1/auth", static, http.HandlerFunc(s.serveAuthControl))
	s.handle(api, "GET /sandbox/v1/sessions", static, http.HandlerFunc(s.serveSessionsControl))
	s.handle(api, "PUT /sandbox/v1/sessions", static, http.HandlerFunc(s.serveSessionsControl))
	s.handle(api, "GET /sandbox/v1/accounts", static, http.HandlerFunc(s.serveAccounts))
	s.handle(api, "POST /sandbox/v1/accounts", static, http.HandlerFunc(s.serveAccounts))
	s.handle(api, "POST /sandbox/v1/accounts/{account}/password", static, http.HandlerFunc(s.servePasswordChange))
	s.api = api
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
		sw.body = s.guardBody(sw, r)
		defer sw.body.done()
		if !s.hostAllowed(r) {
			// DNS rebinding: a web page whose name now points at
			// 127.0.0.1 reaches the port, but its Host is its own name.
			w.Header().Set("Connection", "close")
			writeError(sw, errorf(http.StatusMisdirectedRequest, "misdirected",
				"The sandbox answers only to 127.0.0.1, localhost and [::1] on its own port (or the address it was started with --public for); this request was addressed to %q.", r.Host))
			return
		}
		if strings.HasPrefix(r.URL.Path, "/upload/") && r.URL.Query().Has("upload_id") {
			t := s.holding(bSessions, r.URL.Query().Get("upload_id"))
			if e := s.sessionAuth(r, t); e != nil {
				sw.Header().Set("X-GUploader-UploadID", r.URL.Query().Get("upload_id"))
				s.refuse(sw, r, e)
				return
			}
			t.serveSession(sw, r)
			return
		}
		if r.URL.Path == photosUploadPath && r.URL.Query().Has("upload_id") {
			// A Photos session URL: the capability, like a session URI,
			// held by the account that started it.
			t := s.holding(bPhotosSessions, r.URL.Query().Get("upload_id"))
			if e := s.sessionAuth(r, t); e != nil {
				sw.Header().Set("X-GUploader-UploadID", r.URL.Query().Get("upload_id"))
				s.refuse(sw, r, e)
				return
			}
			t.servePhotosSession(sw, r)
			return
		}
		if r.Method == http.MethodGet && r.URL.Path == ProofPath {
			s.serveProof(sw, r) // before the bearer check: it is how a client learns whom to give one
			return
		}
		if r.Method == http.MethodGet && isDriveLink(r.URL.Path) {
			id, _ := linkID(r)
			s.holding(bDriveFiles, id).serveDriveLink(sw, r) // a browser's link: its own access rule (drivelinks.go)
			return
		}
		if h, pattern := oauth.Handler(r); pattern != "" {
			h.ServeHTTP(sw, r)
			return
		}
		cred := s.credential(r)
		if !cred.ok {
			writeError(sw, errUnauthenticated)
			return
		}
		t := s.accountSandbox(cred.account)
		if a := r.URL.Query().Get("account"); cred.static && a != "" && strings.HasPrefix(r.URL.Path, "/sandbox/v1/") {
			// The controls of another account's Drive (its quota).
			if t = s.accountSandbox(a); t == nil {
				writeError(sw, errNoAccount(a, s.Accounts()))
				return
			}
		}
		if t == nil {
			writeError(sw, errUnauthenticated) // a token of an account no longer served
			return
		}
		t.serveAPI(sw, r, cred)
	})
}

// serveAPI answers a request whose token names this sandbox's account.
func (s *Sandbox) serveAPI(w http.ResponseWriter, r *http.Request, cred credential) {
	if _, pattern := s.api.Handler(r); pattern == "" {
		writeError(w, s.noRoute(s.api, r))
		return
	} else if e := s.checkScope(cred, pattern); e != nil {
		writeError(w, e)
		return
	}
	s.api.ServeHTTP(w, r)
}

// sessionAuth is the session-needs-token switch: with it on, a request to
// a session URI must carry a live token of the account that started the
// session (t's), as Google's APIs other than Cloud Storage may demand.
func (s *Sandbox) sessionAuth(r *http.Request, t *Sandbox) *apiError {
	if !s.AuthConfig().SessionNeedsToken {
		return nil
	}
	c := s.credential(r)
	if !c.ok {
		return errUnauthenticated
	}
	if !strings.EqualFold(c.account, t.opts.Account) {
		return errorf(http.StatusUnauthorized, "authError",
			"The upload session belongs to another account than this token's: send a token of the account that started it.")
	}
	return nil
}

// routeAccess says which tokens a route takes: the static token always;
// a token from /token only when it grants one of scopes (short names, see
// fullScope), and never for staticOnly routes.
type routeAccess struct {
	scopes     []string
	staticOnly bool
}

// handle registers a route with the scopes it needs. A route registered
// without them takes the static token only: a new endpoint is closed to
// OAuth tokens until someone says which scopes open it.
func (s *Sandbox) handle(mux *http.ServeMux, pattern string, a routeAccess, h http.Handler) {
	if len(a.scopes) == 0 {
		a.staticOnly = true
	}
	s.scopes[pattern] = a
	mux.Handle(pattern, h)
}

func (s *Sandbox) handleFunc(mux *http.ServeMux, scopes []string, pattern string, f http.HandlerFunc) {
	s.handle(mux, pattern, routeAccess{scopes: scopes}, f)
}

// hostAllowed is the Host allow-list: the loopback names on the port the
// request came in on, and the hosts the sandbox was told it is public as.
func (s *Sandbox) hostAllowed(r *http.Request) bool {
	host, port := r.Host, ""
	if h, p, err := net.SplitHostPort(r.Host); err == nil {
		host, port = h, p
	}
	for _, pub := range s.opts.PublicHosts {
		if strings.EqualFold(pub, r.Host) || strings.EqualFold(pub, host) && !strings.Contains(pub, ":") {
			return true
		}
	}
	switch strings.ToLower(host) {
	case "127.0.0.1", "localhost", "::1":
	default:
		return false
	}
	local, _ := r.Context().Value(http.LocalAddrContextKey).(net.Addr)
	if local == nil {
		return true // served without a listener (a recorder): no port to compare
	}
	_, lport, err := net.SplitHostPort(local.String())
	if err != nil {
		return false
	}
	if port == "" {
		port = "80"
	}
	return port == lport
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
	return notFound("The sandbox serves nothing at %s. See docs/PROTOCOL.md in Carrier's source for the endpoints.", r.URL.Path)
}

// guardedBody puts a deadline on every request body. A body starts on an
// absolute deadline (BodyTimeout from its first read): metadata, forms and
// fault specs are small, so one trickled a byte at a time is cut off.
// Media bodies (copyBody) then move to a rolling deadline that only moves
// while bytes keep arriving at minBodyRate.
type guardedBody struct {
	body    interface{ Read([]byte) (int, error) }
	closer  func() error
	rc      *http.ResponseController
	timeout time.Duration
	started bool
	eof     bool
}

// minBodyRate is the slowest a media body may arrive, in bytes per second,
// and still keep its connection.
const minBodyRate = 1 << 10

func (s *Sandbox) guardBody(w http.ResponseWriter, r *http.Request) *guardedBody {
	g := &guardedBody{rc: http.NewResponseController(w), timeout: s.opts.BodyTimeout}
	if r.Body == nil || r.Body == http.NoBody {
		g.eof = true
		return g
	}
	g.body, g.closer = r.Body, r.Body.Close
	r.Body = g
	return g
}

func (g *guardedBody) Read(p []byte) (int, error) {
	if !g.started {
		g.started = true
		g.rc.SetReadDeadline(time.Now().Add(g.timeout))
	}
	n, err := g.body.Read(p)
	if err != nil && !g.eof {
		g.eof = true
		// The server reads on in the background once a body ends (to see
		// the client leave); a deadline left behind would cancel a long
		// answer, such as an injected stall. A body that failed keeps its
		// deadline: the connection is not to be read again.
		if err == io.EOF {
			g.rc.SetReadDeadline(time.Time{})
		}
	}
	return n, err
}

func (g *guardedBody) Close() error { return g.closer() }

// streaming hands the request's read deadline to copyBody, which keeps it
// moving while media arrives fast enough.
func streaming(w http.ResponseWriter) {
	if sw, ok := w.(*statusWriter); ok && sw.body != nil {
		sw.body.started = true
	}
}

// done bounds what the server reads of a body the handler left unread:
// it drains one before reusing the connection, and a trickled rest must
// not hold it.
func (g *guardedBody) done() {
	if !g.eof {
		g.rc.SetReadDeadline(time.Now().Add(time.Second))
	}
}
