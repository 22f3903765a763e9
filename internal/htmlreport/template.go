package htmlreport

// pageTemplate is the whole page. Everything it shows is in it: the CSS
// below and the SVG the charts' layout computes.
const pageTemplate = `<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta http-equiv="Content-Security-Policy" content="default-src 'none'; style-src 'unsafe-inline'; img-src data:">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>{{.Title}}</title>
<style>
:root{--ink:#0f172a;--muted:#64748b;--line:#e2e8f0;--bg:#f8fafc;--card:#fff;
--new:#b42318;--new-bg:#fee4e2;--rem:#067647;--rem-bg:#dcfae6;--sh:#93370d;--sh-bg:#fef0c7;
--same:#475467;--same-bg:#f2f4f7;--uns:#5925dc;--uns-bg:#ebe9fe;
--s0:#2563eb;--s1:#98a2b3;--s2:#f79009;--s3:#12b76a;--s4:#7a5af8;--s5:#ee46bc;--s6:#0e9384;--s7:#f04438;--s8:#475467}
*{box-sizing:border-box}
body{margin:0;background:var(--bg);color:var(--ink);font:14px/1.5 system-ui,-apple-system,"Segoe UI",Roboto,"DejaVu Sans",sans-serif}
main{max-width:1240px;margin:0 auto;padding:28px 24px 48px}
h1{font-size:24px;margin:0 0 6px;letter-spacing:-.01em}
h2{font-size:17px;margin:34px 0 10px;padding-bottom:6px;border-bottom:1px solid var(--line)}
h3{font-size:14px;margin:0 0 8px}
p{margin:6px 0}
a{color:#1d4ed8;text-decoration:none}a:hover{text-decoration:underline}
.lead{color:#334155;max-width:900px}
.facts{display:flex;flex-wrap:wrap;gap:8px;margin:14px 0 4px;padding:0;list-style:none}
.facts li{background:var(--card);border:1px solid var(--line);border-radius:8px;padding:6px 10px}
.facts b{display:block;font-size:11px;text-transform:uppercase;letter-spacing:.04em;color:var(--muted);font-weight:600}
.card{background:var(--card);border:1px solid var(--line);border-radius:10px;padding:14px 16px;margin:10px 0}
.scroll{overflow-x:auto}
table.summary{border-collapse:separate;border-spacing:3px;font-size:12px}
table.summary th{font-weight:600;color:#334155;text-align:left;white-space:nowrap;padding:4px 6px}
table.summary thead th{writing-mode:vertical-rl;transform:rotate(180deg);height:118px;vertical-align:bottom;font-weight:500}
table.summary td{padding:4px 3px;border-radius:5px;text-align:center;min-width:34px;white-space:nowrap;font-size:11.5px}
table.summary td a{color:inherit;display:block}
caption{caption-side:top;text-align:left;color:var(--muted);padding:0 0 6px}
.new{background:var(--new-bg);color:var(--new);font-weight:600}
.removed{background:var(--rem-bg);color:var(--rem);font-weight:600}
.shared{background:var(--sh-bg);color:var(--sh)}
.same{background:var(--same-bg);color:var(--same)}
.unsteady{background:var(--uns-bg);color:var(--uns)}
.pass{background:var(--rem-bg);color:var(--rem)}
.fail{background:var(--new-bg);color:var(--new);font-weight:600}
.notrun{background:var(--same-bg);color:var(--muted)}
.notapplicable{background:var(--bg);color:var(--muted);font-style:italic}
.mark{display:inline-block;margin-left:4px;padding:0 4px;border-radius:4px;background:var(--new);color:#fff;font-size:10px;font-weight:700}
.legend{display:flex;flex-wrap:wrap;gap:6px;margin:10px 0 0;padding:0;list-style:none;font-size:12px}
.legend li{padding:2px 8px;border-radius:5px}
.item{border-left:4px solid var(--line)}
.item.new{border-left-color:var(--new)}.item.removed{border-left-color:var(--rem)}.item.shared{border-left-color:var(--sh)}
.item.new,.item.removed,.item.shared,.item.same,.item.unsteady{background:var(--card);color:var(--ink);font-weight:400}
.item .badge{display:inline-block;font-size:11px;font-weight:700;text-transform:uppercase;letter-spacing:.04em;border-radius:4px;padding:1px 6px;margin-right:6px}
.item.new .badge{background:var(--new-bg);color:var(--new)}.item.removed .badge{background:var(--rem-bg);color:var(--rem)}
.item.shared .badge{background:var(--sh-bg);color:var(--sh)}.item.same .badge{background:var(--same-bg);color:var(--same)}
.sides{display:grid;grid-template-columns:repeat(auto-fit,minmax(280px,1fr));gap:10px;margin-top:10px}
.side{background:var(--bg);border:1px solid var(--line);border-radius:8px;padding:8px 10px;font-size:12.5px}
.side h4{margin:0 0 4px;font-size:12px;color:#334155;display:flex;justify-content:space-between;gap:8px}
.side ul{margin:0;padding-left:16px}.side li{margin:2px 0;overflow-wrap:anywhere}
.charts{display:grid;grid-template-columns:repeat(auto-fit,minmax(470px,1fr));gap:12px}
.chart h3{display:flex;justify-content:space-between;align-items:baseline}
.chart h3 small{color:var(--muted);font-weight:400}
.keys{display:flex;gap:12px;font-size:12px;color:#334155;margin:0 0 6px;padding:0;list-style:none}
.keys i{display:inline-block;width:10px;height:10px;border-radius:2px;margin-right:5px;vertical-align:-1px}
svg{width:100%;height:auto;display:block}
svg text{font:10px system-ui,-apple-system,"Segoe UI",Roboto,"DejaVu Sans",sans-serif;fill:#334155}
svg .label{text-anchor:end}
svg .val{fill:var(--muted)}
svg .tick{stroke:var(--line);stroke-width:1}
svg .ticktext{fill:#98a2b3;text-anchor:middle;font-size:9px}
.s0{fill:var(--s0);background:var(--s0)}.s1{fill:var(--s1);background:var(--s1)}.s2{fill:var(--s2);background:var(--s2)}
.s3{fill:var(--s3);background:var(--s3)}.s4{fill:var(--s4);background:var(--s4)}.s5{fill:var(--s5);background:var(--s5)}
.s6{fill:var(--s6);background:var(--s6)}.s7{fill:var(--s7);background:var(--s7)}.s8{fill:var(--s8);background:var(--s8)}
.links{columns:2 320px;margin:0;padding-left:18px}
.empty{color:var(--muted)}
</style>
</head>
<body>
<main>
<h1>{{.Title}}</h1>
{{with .Lead}}<p class="lead">{{.}}</p>{{end}}
{{with .Facts}}<ul class="facts">{{range .}}<li><b>{{.Label}}</b>{{.Value}}</li>{{end}}</ul>{{end}}

<h2 id="summary">Summary</h2>
<div class="card scroll">
<table class="summary" id="summary-table">
{{with .Summary.Caption}}<caption>{{.}}</caption>{{end}}
<thead><tr><th></th>{{range .Summary.Head}}<th scope="col">{{.}}</th>{{end}}</tr></thead>
<tbody>
{{range .Summary.Rows}}<tr class="row"><th scope="row">{{if .Head.Href}}<a href="{{.Head.Href}}">{{.Head.Text}}</a>{{else}}{{.Head.Text}}{{end}}</th>{{range .Cells}}<td class="{{.Class}}"{{with .Title}} title="{{.}}"{{end}}>{{if .Href}}<a href="{{.Href}}">{{.Text}}</a>{{else}}{{.Text}}{{end}}{{with .Mark}}<span class="mark">{{.}}</span>{{end}}</td>{{end}}</tr>
{{end}}</tbody>
</table>
{{with .Summary.Legend}}<ul class="legend">{{range .}}<li class="{{.Class}}">{{.Text}}</li>{{end}}</ul>{{end}}
</div>

{{range .Sections}}
<h2{{with .ID}} id="{{.}}"{{end}}>{{.Heading}}</h2>
{{with .Intro}}<p>{{.}}</p>{{end}}
{{if and (not .Items) (not .Charts) (not .Table) (not .Links)}}{{with .Empty}}<p class="empty">{{.}}</p>{{end}}{{end}}
{{range .Items}}<div class="card item {{.Class}}">
<h3><span class="badge">{{or .Badge .Class}}</span>{{.Title}}</h3>
{{with .What}}<p>{{.}}</p>{{end}}
{{with .Sides}}<div class="sides">{{range .}}<div class="side"><h4><span>{{.Heading}}</span>{{with .Href}}<a href="{{.}}">evidence</a>{{end}}</h4>{{with .Lines}}<ul>{{range .}}<li>{{.}}</li>{{end}}</ul>{{else}}<p class="empty">nothing failed</p>{{end}}</div>{{end}}</div>{{end}}
</div>
{{end}}
{{range .Charts}}<div class="card">
<h3>{{.Title}}</h3>
<div class="charts">{{range .Charts}}{{$c := layout .}}<div class="chart">
<h3>{{$c.Title}} <small>{{$c.Unit}}</small></h3>
<ul class="keys">{{range $i, $s := $c.Series}}<li><i class="s{{mod $i}}"></i>{{$s}}</li>{{end}}</ul>
<svg class="bars" viewBox="0 0 {{f $c.Width}} {{f $c.Height}}" data-bars="{{len $c.Bars}}" role="img" aria-label="{{$c.Title}}">
{{range $c.Ticks}}<line class="tick" x1="{{f .X}}" x2="{{f .X}}" y1="0" y2="{{f (sub $c.Height 14)}}"></line><text class="ticktext" x="{{f .X}}" y="{{f (sub $c.Height 3)}}">{{.Text}}</text>
{{end}}{{range $c.Labels}}<text class="label" x="{{f .X}}" y="{{f .Y}}">{{.Text}}</text>
{{end}}{{range $c.Bars}}<rect class="bar s{{.Series}}" x="{{f .X}}" y="{{f .Y}}" width="{{f .W}}" height="{{f .H}}" rx="1.5"><title>{{.Title}}</title></rect><text class="val" x="{{f .VX}}" y="{{f (add .Y 7.5)}}">{{.Value}}</text>
{{end}}</svg>
</div>{{end}}</div>
{{with .Links}}<p>{{range $i, $l := .}}{{if $i}} · {{end}}<a href="{{$l.Href}}">{{$l.Label}}</a>{{end}}</p>{{end}}
</div>
{{end}}
{{with .Table}}<div class="card scroll"><table class="summary">{{with .Caption}}<caption>{{.}}</caption>{{end}}
<thead><tr><th></th>{{range .Head}}<th scope="col">{{.}}</th>{{end}}</tr></thead>
<tbody>{{range .Rows}}<tr><th scope="row">{{.Head.Text}}</th>{{range .Cells}}<td class="{{.Class}}"{{with .Title}} title="{{.}}"{{end}}>{{if .Href}}<a href="{{.Href}}">{{.Text}}</a>{{else}}{{.Text}}{{end}}</td>{{end}}</tr>
{{end}}</tbody></table></div>{{end}}
{{with .Links}}<div class="card"><ul class="links">{{range .}}<li><a href="{{.Href}}">{{.Label}}</a></li>{{end}}</ul></div>{{end}}
{{end}}
</main>
</body>
</html>
`
