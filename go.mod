module carrier

go 1.26.0

require (
	github.com/emersion/go-message v0.18.2 // indirect
	go.etcd.io/bbolt v1.5.0 // indirect
	golang.org/x/sys v0.49.0 // indirect
	google.golang.org/api v0.310.0 // indirect
)
