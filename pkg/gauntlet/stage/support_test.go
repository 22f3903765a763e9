package stage

import (
	"errors"
	"fmt"
	"testing"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/runtime/schema"
)

func TestDiscoveryAsksAgainOnlyOnTransientErrors(t *testing.T) {
	gr := schema.GroupResource{Group: "metrics.k8s.io", Resource: "pods"}
	for _, tc := range []struct {
		err  error
		want bool
	}{
		{fmt.Errorf("GET: %w", apierrors.NewInternalError(errors.New("Unauthorized"))), true},
		{apierrors.NewServiceUnavailable("backend down"), true},
		{apierrors.NewUnauthorized("not yet"), true},
		{apierrors.NewNotFound(gr, "v1beta1"), false},
		{errors.New("answered with 0 resources"), false},
	} {
		if got := transient(tc.err); got != tc.want {
			t.Errorf("transient(%v) = %v, want %v", tc.err, got, tc.want)
		}
	}
}
