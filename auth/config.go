package auth

import (
	"encoding/json"
	"errors"
	"fmt"
	"net"
	"net/url"
	"slices"
	"strings"

	"golang.org/x/oauth2"
)

// GoogleEndpoint is the base URL of Google's APIs. Every *.googleapis.com
// host maps to it, so one sign-in serves Gmail, Mirror and Storage.
const GoogleEndpoint = "https://www.googleapis.com"

// SandboxClientID is the public OAuth client of the embedded sandbox; it
// has no secret, like any installed app's client under PKCE.
const SandboxClientID = "carrier-sandbox"

const (
	googleAuthURL   = "https://accounts.google.com/o/oauth2/auth"
	googleTokenURL  = "https://oauth2.googleapis.com/token"
	googleRevokeURL = "https://oauth2.googleapis.com/revoke"
)

// googleIdentityScopes name the account in the token (see IdentityScopes).
var googleIdentityScopes = []string{"openid", "email"}

// Config says where to sign in and for which API endpoint.
type Config struct {
	// Endpoint is the base URL of the API the tokens are for, e.g.
	// GoogleEndpoint or a sandbox's URL. The account's address is read
	// from its Gmail profile, and the keychain entry is keyed by it.
	Endpoint string
	// OAuth holds the client and the server's AuthURL and TokenURL; Login
	// sets RedirectURL and Scopes itself.
	OAuth oauth2.Config
	// RevokeURL is where Logout tells the server to drop the grant; empty
	// means the server is not told.
	RevokeURL string
	// IdentityScopes are asked for with every sign-in so the token names
	// its account: with gmail.send alone, Google refuses users.getProfile.
	IdentityScopes []string
	// AuthParams adds parameters to the sign-in address, given what they
	// may be bound to: a sandbox signs in only a client that proves it
	// holds its token (sandbox.ConsentProof). Nil: none.
	AuthParams func(codeChallenge, redirectURI, scope string) map[string]string
}

// SandboxConfig signs in to a sandbox at base (e.g. http://127.0.0.1:8089).
func SandboxConfig(base string) (*Config, error) {
	b, _, err := canonicalEndpoint(base)
	if err != nil {
		return nil, err
	}
	return &Config{
		Endpoint: b,
		OAuth: oauth2.Config{
			ClientID: SandboxClientID,
			Endpoint: oauth2.Endpoint{
				AuthURL:   b + "/o/oauth2/v2/auth",
				TokenURL:  b + "/token",
				AuthStyle: oauth2.AuthStyleInParams,
			},
		},
		RevokeURL: b + "/revoke",
	}, nil
}

// DesktopClientHowTo says how to make the OAuth client Carrier signs in
// with; every complaint about a client file ends with it.
const DesktopClientHowTo = `make one in Google Cloud Console (` + ConsoleCredentialsURL + `): Create credentials > OAuth client ID > Application type "Desktop app", then Download JSON`

// ConsoleCredentialsURL is the Cloud Console page where OAuth clients are made.
const ConsoleCredentialsURL = "https://console.cloud.google.com/apis/credentials"

// GoogleConfig reads the OAuth client file a person downloads from the
// Google Cloud Console (APIs & Services > Credentials > OAuth client ID of
// type "Desktop app" > Download JSON). Its errors say what is wrong with
// the file and how to make the right one: the window's set-up assistant
// and `carrier login --client-secret` show them as they are.
func GoogleConfig(clientSecretJSON []byte) (*Config, error) {
	c, err := readInstalledClient(clientSecretJSON)
	if err != nil {
		return nil, err
	}
	if c.AuthURI == "" {
		c.AuthURI = googleAuthURL
	}
	if c.TokenURI == "" {
		c.TokenURI = googleTokenURL
	}
	// The authorization code and the PKCE verifier go to the token URI:
	// a file that names another server would hand them over. Only
	// Google's own OAuth hosts are taken, whatever the file says.
	for _, u := range []string{c.AuthURI, c.TokenURI} {
		if !isGoogleOAuthURL(u) {
			return nil, fmt.Errorf("the client secret file names %q as an OAuth server; Carrier signs in to Google only at https://accounts.google.com and https://oauth2.googleapis.com: download the file again, or %s", u, DesktopClientHowTo)
		}
	}
	return &Config{
		Endpoint: GoogleEndpoint,
		OAuth: oauth2.Config{
			ClientID:     c.ClientID,
			ClientSecret: c.ClientSecret,
			Endpoint:     oauth2.Endpoint{AuthURL: c.AuthURI, TokenURL: c.TokenURI, AuthStyle: oauth2.AuthStyleInParams},
		},
		RevokeURL:      googleRevokeURL,
		IdentityScopes: googleIdentityScopes,
	}, nil
}

// installedClient is the "installed" part of a client file.
type installedClient struct {
	ClientID     string `json:"client_id"`
	ClientSecret string `json:"client_secret"`
	AuthURI      string `json:"auth_uri"`
	TokenURI     string `json:"token_uri"`
}

// readInstalledClient reads a client file down to its "Desktop app"
// client, or says in words what else the file is.
func readInstalledClient(clientSecretJSON []byte) (*installedClient, error) {
	var f struct {
		Installed *installedClient `json:"installed"`
		Web       *installedClient `json:"web"`
		Type      string           `json:"type"`
	}
	if len(strings.TrimSpace(string(clientSecretJSON))) == 0 {
		return nil, errors.New("the client secret file is empty: " + DesktopClientHowTo)
	}
	if err := json.Unmarshal(clientSecretJSON, &f); err != nil {
		return nil, fmt.Errorf("the client secret file is not the JSON Google Cloud Console downloads (%w): %s", err, DesktopClientHowTo)
	}
	if f.Installed == nil {
		switch {
		case f.Web != nil:
			return nil, errors.New(`the client secret file is for a "Web application" client, whose sign-ins cannot come back to Carrier on this computer; Carrier needs a "Desktop app" client: ` + DesktopClientHowTo)
		case f.Type == "service_account":
			return nil, errors.New(`the file is a service account's key, which cannot sign a person in; Carrier needs an OAuth client of type "Desktop app": ` + DesktopClientHowTo)
		}
		return nil, errors.New(`the client secret file has no "installed" client: ` + DesktopClientHowTo)
	}
	if f.Installed.ClientID == "" {
		return nil, errors.New("the client secret file has no client_id: download it again, or " + DesktopClientHowTo)
	}
	return f.Installed, nil
}

// StandInConfig reads a client file for a sandbox standing in for Google
// at base (the window's sign-in walked end to end without Google: see
// app.SandboxSignInEnv). The file is checked as GoogleConfig checks
// Google's, with the same words, except that its OAuth addresses must be
// the sandbox's own and its client the sandbox's: the code and verifier
// still go nowhere but the server the sign-in is for.
func StandInConfig(clientSecretJSON []byte, base string) (*Config, error) {
	c, err := readInstalledClient(clientSecretJSON)
	if err != nil {
		return nil, err
	}
	cfg, err := SandboxConfig(base)
	if err != nil {
		return nil, err
	}
	for _, u := range [][2]string{{c.AuthURI, cfg.OAuth.Endpoint.AuthURL}, {c.TokenURI, cfg.OAuth.Endpoint.TokenURL}} {
		if u[0] != u[1] {
			return nil, fmt.Errorf("the client secret file names %q as an OAuth server; the sandbox standing in for Google signs in at %s and %s only", u[0], cfg.OAuth.Endpoint.AuthURL, cfg.OAuth.Endpoint.TokenURL)
		}
	}
	if c.ClientID != SandboxClientID {
		return nil, fmt.Errorf("the client secret file's client %q is not the sandbox's, %q", c.ClientID, SandboxClientID)
	}
	return cfg, nil
}

// Config is the sign-in configuration of the client a was signed in with,
// read back from its keychain entry, so that the sign-in can be widened
// (Login with more scopes: incremental consent) without the person
// choosing the client file again. A sandbox's still needs its AuthParams.
func (a *Account) Config() (*Config, error) {
	a.mu.Lock()
	e := a.e
	a.mu.Unlock()
	if e.Endpoint != GoogleEndpoint {
		c, err := SandboxConfig(e.Endpoint)
		if err != nil {
			return nil, err
		}
		c.OAuth.ClientID, c.RevokeURL = e.ClientID, e.RevokeURL
		return c, nil
	}
	// The code and the verifier go to the token URL: as in GoogleConfig,
	// only Google's own hosts are taken.
	if !isGoogleOAuthURL(e.TokenURL) {
		return nil, fmt.Errorf("the sign-in of %s names %q as its OAuth server, which is not Google's: sign out and sign in again", e.Account, e.TokenURL)
	}
	return &Config{
		Endpoint: GoogleEndpoint,
		OAuth: oauth2.Config{
			ClientID:     e.ClientID,
			ClientSecret: e.ClientSecret,
			Endpoint:     oauth2.Endpoint{AuthURL: googleAuthURL, TokenURL: e.TokenURL, AuthStyle: oauth2.AuthStyleInParams},
		},
		RevokeURL:      e.RevokeURL,
		IdentityScopes: googleIdentityScopes,
	}, nil
}

// googleOAuthHosts are the hosts Google's OAuth client files name for
// authorization and tokens.
var googleOAuthHosts = []string{"accounts.google.com", "oauth2.googleapis.com"}

// isGoogleOAuthURL reports whether raw is an https URL on one of Google's
// OAuth hosts, on the default port, without user info.
func isGoogleOAuthURL(raw string) bool {
	u, err := url.Parse(raw)
	if err != nil || u.Scheme != "https" || u.User != nil || u.Port() != "" && u.Port() != "443" {
		return false
	}
	return slices.Contains(googleOAuthHosts, strings.ToLower(u.Hostname()))
}

// canonicalEndpoint returns the base URL the tokens are for and the host
// that keys its keychain entries.
func canonicalEndpoint(raw string) (base, host string, err error) {
	u, err := url.Parse(strings.TrimSpace(raw))
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return "", "", fmt.Errorf("endpoint %q is not an http(s) URL such as http://127.0.0.1:8089 or %s", raw, GoogleEndpoint)
	}
	if u.User != nil || (u.Path != "" && u.Path != "/") || u.RawQuery != "" || u.Fragment != "" {
		return "", "", fmt.Errorf("endpoint %q must be a bare base URL such as http://127.0.0.1:8089, with no path, query or user", raw)
	}
	h := strings.ToLower(u.Hostname())
	port := u.Port()
	if (u.Scheme == "http" && port == "80") || (u.Scheme == "https" && port == "443") {
		port = ""
	}
	if u.Scheme == "https" && port == "" && (h == "googleapis.com" || strings.HasSuffix(h, ".googleapis.com")) {
		return GoogleEndpoint, "www.googleapis.com", nil
	}
	host = h
	if strings.Contains(h, ":") {
		host = "[" + h + "]"
	}
	if port != "" {
		host = net.JoinHostPort(h, port)
	}
	return u.Scheme + "://" + host, host, nil
}

// CanonicalEndpoint returns the form of an endpoint URL accounts are kept
// under, or an error that says what a valid one looks like.
func CanonicalEndpoint(raw string) (string, error) {
	b, _, err := canonicalEndpoint(raw)
	return b, err
}
