package debian

import "testing"

func TestMirrorIsTheSuitesMainComponent(t *testing.T) {
	out := "http://security.example/debian-security/|bookworm-security|main|deb\n" +
		"http://mirror.example/debian/|bookworm-updates|main|deb\n" +
		"http://mirror.example/debian/|bookworm|contrib|deb\n" +
		"http://mirror.example/debian/|bookworm|main|deb-src\n" +
		"http://mirror.example/debian/|bookworm|main|deb\n"
	got, err := mirrorFrom(out, "bookworm")
	if err != nil || got != "http://mirror.example/debian/" {
		t.Errorf("mirror %q, %v", got, err)
	}
	if _, err := mirrorFrom(out, "trixie"); err == nil {
		t.Error("a suite the sources do not serve was found")
	}
}
