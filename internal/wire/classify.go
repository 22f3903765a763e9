package wire

import (
	"net/url"
	"strings"
)

// Classify says what a request does in Kubernetes terms, from its method,
// path and query alone, the way kube-apiserver decides which verb RBAC
// sees. It fills Verb, Resource, Namespace, Name, Method and Path; a
// create's Name is in its body, which Classify does not read (the proxy
// does, see WithBodyLimit).
//
// Resource requests (/api/v1/..., /apis/GROUP/VERSION/...) get the verbs
// get, list, watch, create, update, patch, delete and deletecollection
// (and proxy for the legacy /proxy/ prefix), and a Resource of the form
// "configmaps", "deployments.apps" or "deployments.apps/status".
// Everything else, discovery (/api, /apis/apps/v1) and /version and
// /openapi/v3 included, is a non-resource request: its Verb is the
// lower-cased method and its Resource "nonresource:" plus the path.
func Classify(method string, u *url.URL) Request {
	r := Request{Method: method, Path: u.Path, Verb: strings.ToLower(method)}
	parts := splitPath(u.Path)
	var group string
	switch {
	case len(parts) >= 3 && parts[0] == "api":
		parts = parts[2:] // "api", version
	case len(parts) >= 4 && parts[0] == "apis":
		group, parts = parts[1], parts[3:] // "apis", group, version
	default:
		r.Resource = "nonresource:" + nonEmpty(u.Path)
		return r
	}

	// The path-prefix verbs (/api/v1/watch/..., /api/v1/proxy/...) are
	// deprecated but still served, so still classified.
	if (parts[0] == "watch" || parts[0] == "proxy") && len(parts) >= 2 {
		r.Verb, parts = parts[0], parts[1:]
	} else {
		r.Verb = methodVerb(method)
	}

	// /namespaces/NS/RESOURCE/... is RESOURCE in NS; /namespaces/NS and
	// its own subresources (status, finalize) are the Namespace object,
	// which kube-apiserver also files under namespace NS.
	if parts[0] == "namespaces" && len(parts) >= 2 {
		r.Namespace = parts[1]
		if len(parts) >= 3 && parts[2] != "status" && parts[2] != "finalize" {
			parts = parts[2:]
		}
	}

	resource, sub := parts[0], ""
	if len(parts) >= 2 {
		r.Name = parts[1]
	}
	// proxy/NAME/some/path proxies to a path, not to a subresource.
	if len(parts) >= 3 && r.Verb != "proxy" {
		sub = parts[2]
	}
	r.Resource = resourceKey(resource, group, sub)

	if r.Name == "" && r.Verb == "get" {
		// A GET of a collection is a list, or a watch when asked for.
		q := u.Query()
		r.Verb = "list"
		if vs, ok := q["watch"]; ok && watchValue(vs) {
			r.Verb = "watch"
		}
		// Informers on one object list and watch the collection with
		// fieldSelector=metadata.name=NAME; name it as the server does.
		r.Name = fieldSelectorName(q.Get("fieldSelector"))
	}
	if r.Name == "" && r.Verb == "delete" {
		r.Verb = "deletecollection"
	}
	return r
}

func resourceKey(resource, group, sub string) string {
	k := resource
	if group != "" {
		k += "." + group
	}
	if sub != "" {
		k += "/" + sub
	}
	return k
}

func methodVerb(method string) string {
	switch method {
	case "POST":
		return "create"
	case "GET", "HEAD":
		return "get"
	case "PUT":
		return "update"
	case "PATCH":
		return "patch"
	case "DELETE":
		return "delete"
	}
	return strings.ToLower(method)
}

// watchValue follows the apiserver's query decoding: any value but "0"
// and "false" (the empty one included) turns a watch on.
func watchValue(vs []string) bool {
	return len(vs) > 0 && vs[0] != "0" && !strings.EqualFold(vs[0], "false")
}

// fieldSelectorName returns NAME when the selector pins metadata.name
// (metadata.name=NAME or metadata.name==NAME among its terms), and only
// when NAME could be a path segment, as the server requires.
func fieldSelectorName(sel string) string {
	if sel == "" || strings.Contains(sel, `\`) {
		// Escaped selectors never pin a valid object name; skip parsing them.
		return ""
	}
	for _, term := range strings.Split(sel, ",") {
		if strings.Contains(term, "!=") {
			continue
		}
		k, v, ok := strings.Cut(term, "=")
		if !ok || strings.TrimSpace(k) != "metadata.name" {
			continue
		}
		v = strings.TrimSpace(strings.TrimPrefix(v, "="))
		if v == "" || v == "." || v == ".." || strings.ContainsAny(v, "/%") {
			return ""
		}
		return v
	}
	return ""
}

func splitPath(p string) []string {
	p = strings.Trim(p, "/")
	if p == "" {
		return nil
	}
	return strings.Split(p, "/")
}

func nonEmpty(p string) string {
	if p == "" {
		return "/"
	}
	return p
}
