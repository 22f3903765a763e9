// Tool module: builds gauntlet's own gauntlet-runc (main.go.txt). Never imported by the library.
module gauntlet.tools/gauntlet-runc

go 1.26.0
