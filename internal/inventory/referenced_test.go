package inventory

import (
	"testing"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
)

func TestVersionReferenced(t *testing.T) {
	obj := func(s string) *unstructured.Unstructured {
		u := &unstructured.Unstructured{}
		if err := u.UnmarshalJSON([]byte(s)); err != nil {
			t.Fatal(err)
		}
		return u
	}
	secret := obj(`{"apiVersion":"v1","kind":"Secret","metadata":{"name":"config","namespace":"default","resourceVersion":"518","uid":"u-1"}}`)
	reader := obj(`{"apiVersion":"apps/v1","kind":"Deployment","metadata":{"name":"app","namespace":"default","resourceVersion":"530","uid":"u-2"},
		"spec":{"template":{"metadata":{"annotations":{"config_version":"518"}}}}}`)
	owned := obj(`{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"owned","namespace":"default","resourceVersion":"531",
		"ownerReferences":[{"uid":"u-2"}]},"data":{"note":"version 530"}}`)
	got := VersionReferenced([]*unstructured.Unstructured{secret, reader, owned})
	if !got[RefOf(secret)] {
		t.Errorf("the Secret whose resource version an annotation copies: not found in %v", got)
	}
	if got[RefOf(reader)] || got[RefOf(owned)] {
		t.Errorf("an owner reference's uid, or a version inside a longer string, is no copy: got %v", got)
	}
}
