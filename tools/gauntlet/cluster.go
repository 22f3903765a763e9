package main

import (
	"context"
	"fmt"
)

func runCluster(ctx context.Context, args []string) error {
	return fmt.Errorf("not built yet")
}
