package nodeimage

import "fmt"

// The files gauntlet adds to kind's base files. They change the image's
// bytes, so each is part of the base's cache key.

// importImagesUnit imports the preloaded images once per node, before the
// kubelet starts: nothing can be pulled where this image runs.
const importImagesUnit = `# Written by gauntlet's kind node image builder.
[Unit]
Description=Import the images preloaded in /kind/images into containerd
After=containerd.service
Requires=containerd.service
Before=kubelet.service
ConditionPathExists=!/var/lib/gauntlet/images-imported

[Service]
Type=oneshot
RemainAfterExit=yes
ExecStart=/kind/bin/gauntlet-import-images.sh

[Install]
WantedBy=multi-user.target
`

const importImagesScript = `#!/bin/bash
# Written by gauntlet's kind node image builder: imports each image listed in
# /kind/images/images.txt ("<file> <reference>") into containerd's k8s.io
# namespace and pins it against the kubelet's image garbage collection.
set -o errexit -o nounset -o pipefail
while read -r file ref; do
  ctr --namespace=k8s.io images import --all-platforms --no-unpack "/kind/images/${file}"
  ctr --namespace=k8s.io images label "${ref}" io.cri-containerd.pinned=pinned >/dev/null
done < /kind/images/images.txt
mkdir -p /var/lib/gauntlet
touch /var/lib/gauntlet/images-imported
`

// oomScoreAdjDropIn runs before containerd on every node start.
const oomScoreAdjDropIn = `# Written by gauntlet's kind node image builder.
[Service]
ExecStartPre=/kind/bin/gauntlet-oom-score-adj.sh
`

const oomScoreAdjScript = `#!/bin/bash
# Written by gauntlet's kind node image builder. Where the capability bounding
# set lacks CAP_SYS_RESOURCE (bit 24; some VMs drop it), runc cannot give a
# container a lower oom_score_adj than containerd's own and every container
# would fail to start: containerd is told to restrict oom_score_adj instead.
# Elsewhere the configuration stays as kind ships it.
set -o errexit -o nounset
bnd=
while read -r key value _; do
  if [[ ${key} == CapBnd: ]]; then bnd=${value}; fi
done < /proc/self/status
if [[ -n ${bnd} ]] && (( (16#${bnd} >> 24 & 1) == 0 )); then
  sed -i 's/restrict_oom_score_adj = false/restrict_oom_score_adj = true/' /etc/containerd/config.toml
fi
`

// podSubnet is the node's pod range: kind's default pod subnet
// (10.244.0.0/16) gives the first node 10.244.0.0/24.
const podSubnet = "10.244.0.0/24"

// cniConflist stands in for kindnetd, which cannot be obtained offline:
// ptp interfaces with host-local addresses from the node's pod range,
// masquerade for traffic leaving it, and hostPort mapping. It serves one
// node; gauntlet's kind clusters have exactly one.
var cniConflist = fmt.Sprintf(`{
  "cniVersion": "0.4.0",
  "name": "gauntlet-ptp",
  "plugins": [
    {
      "type": "ptp",
      "ipMasq": true,
      "mtu": 1500,
      "ipam": {
        "type": "host-local",
        "ranges": [[{"subnet": %q}]],
        "routes": [{"dst": "0.0.0.0/0"}]
      }
    },
    {
      "type": "portmap",
      "capabilities": {"portMappings": true}
    }
  ]
}
`, podSubnet)

// defaultCNIManifest is what kind applies as its CNI: the network is the
// static conflist above, so this only records that in the cluster.
const defaultCNIManifest = `# Written by gauntlet's kind node image builder. kindnetd cannot be obtained
# offline; the node's network is a static ptp conflist in /etc/cni/net.d.
apiVersion: v1
kind: ConfigMap
metadata:
  name: gauntlet-cni
  namespace: kube-system
data:
  cni: ptp + host-local + portmap, /etc/cni/net.d/10-gauntlet-ptp.conflist, one node
`

// serviceGuardUnit installs the guard below before the kubelet starts.
const serviceGuardUnit = `# Written by gauntlet's kind node image builder.
[Unit]
Description=Reject pod traffic to Service IPs kube-proxy has not programmed yet
Before=kubelet.service

[Service]
Type=oneshot
RemainAfterExit=yes
ExecStart=/kind/bin/gauntlet-service-guard.sh

[Install]
WantedBy=multi-user.target
`

// serviceGuardScript rejects what reaches FORWARD still addressed to a
// Service IP, i.e. what kube-proxy has not translated (yet). With the
// static CNI the node is network-ready before kube-proxy has written its
// rules, so the first pods (CoreDNS) connect to 10.96.0.1 at once; without
// the guard those SYNs leave for the Docker bridge, where nothing answers,
// and their stale conntrack entries keep later SYNs of the same connection
// from being translated: CoreDNS then waits about 30 s for a TCP timeout.
// Rejected, the connection fails at once and the retry is translated.
// Traffic kube-proxy translates no longer has a Service IP as destination
// in FORWARD, so the guard never touches it.
const serviceGuardScript = `#!/bin/bash
# Written by gauntlet's kind node image builder; see the unit's description.
set -o errexit -o nounset
iptables -w -I FORWARD -d ` + serviceRange + ` -m comment --comment "gauntlet: Service IP not translated by kube-proxy" -j REJECT
`

// serviceRange covers kind's default Service subnet (10.96.0.0/16).
const serviceRange = "10.96.0.0/12"

// cniPlugins are linked into /opt/cni/bin, where containerd looks, from
// Debian's containernetworking-plugins.
var cniPlugins = []string{"host-local", "loopback", "portmap", "ptp"}
