package engine_test

import (
	"fmt"

	"github.com/gauntlet-k8s/gauntlet/pkg/gauntlet/engine"
)

// What an engine can do follows from its name and version: a stage that
// needs a capability the engine lacks is not run, naming the release that
// brought it.
func ExampleStockCapabilities() {
	old := engine.Profile{Name: "terraform", Version: "1.4.6", Capabilities: engine.StockCapabilities("terraform", "1.4.6")}
	fmt.Println(old.Has(engine.ImportBlocks))
	fmt.Println(engine.StockCapabilities("tofu", "1.12.6")[engine.ImportBlocks])
	// Output:
	// false
	// true
}
