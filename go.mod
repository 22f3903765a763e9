module github.com/gauntlet-k8s/gauntlet

go 1.26.0

require (
	github.com/hashicorp/go-version v1.9.0
	github.com/hashicorp/hc-install v0.10.0
	golang.org/x/mod v0.41.0
)

require (
	github.com/ProtonMail/go-crypto v1.5.2 // indirect
	github.com/cloudflare/circl v1.6.3 // indirect
	github.com/hashicorp/errwrap v1.0.0 // indirect
	github.com/hashicorp/go-cleanhttp v0.5.2 // indirect
	github.com/hashicorp/go-multierror v1.1.1 // indirect
	github.com/hashicorp/go-retryablehttp v0.7.8 // indirect
	golang.org/x/crypto v0.56.0 // indirect
	golang.org/x/sys v0.47.0 // indirect
)
