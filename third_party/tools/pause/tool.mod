// Tool module: builds gauntlet's own pause (main.go.txt). Never imported by the library.
module gauntlet.tools/pause

go 1.26.0
