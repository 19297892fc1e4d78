package auth

import (
	"strings"
	"testing"
)

func TestPasswordMatches(t *testing.T) {
	tests := []struct {
		name       string
		secret     string
		submitted  string
		configured bool
		want       bool
	}{
		{"none configured, none submitted", "", "", false, true},
		{"none configured, any submitted", "", "whatever", false, true},
		{"configured, exact", "s3cret-s3cret-s3cret", "s3cret-s3cret-s3cret", true, true},
		{"configured, missing", "s3cret-s3cret-s3cret", "", true, false},
		{"configured, wrong", "s3cret-s3cret-s3cret", "s3cret-s3cret-s3creT", true, false},
		{"configured, prefix", "s3cret-s3cret-s3cret", "s3cret", true, false},
		{"configured, longer", "abc", "abcd", true, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			p := NewPassword(tt.secret)
			if got := p.Configured(); got != tt.configured {
				t.Errorf("Configured() = %v, want %v", got, tt.configured)
			}
			if got := p.Matches(tt.submitted); got != tt.want {
				t.Errorf("Matches(%q) = %v, want %v", tt.submitted, got, tt.want)
			}
		})
	}
}

func TestPasswordZeroValue(t *testing.T) {
	var p Password
	if p.Configured() || !p.Matches("x") {
		t.Fatalf("zero Password must be unconfigured and accept everything")
	}
}

func env(vars map[string]string) func(string) string {
	return func(k string) string { return vars[k] }
}

func TestStartupPolicy(t *testing.T) {
	tests := []struct {
		name         string
		secret       string
		env          map[string]string
		wantErr      bool
		wantWarnings []string // substrings, one per expected warning
	}{
		{name: "no password, nothing set = production", env: nil, wantErr: true},
		{name: "no password, RAILS_ENV production", env: map[string]string{"RAILS_ENV": "production"}, wantErr: true},
		{name: "no password, NODE_ENV production", env: map[string]string{"NODE_ENV": "production"}, wantErr: true},
		{name: "no password, development", env: map[string]string{"RAILS_ENV": "development"}, wantWarnings: []string{"not set"}},
		{name: "no password, test", env: map[string]string{"NODE_ENV": "test"}, wantWarnings: []string{"not set"}},
		{name: "no password, both dev/test", env: map[string]string{"RAILS_ENV": "test", "NODE_ENV": "development"}, wantWarnings: []string{"not set"}},
		{name: "no password, one production", env: map[string]string{"RAILS_ENV": "development", "NODE_ENV": "production"}, wantErr: true},
		{name: "no password, staging", env: map[string]string{"RAILS_ENV": "staging"}, wantErr: true},
		{name: "no password, wrong case", env: map[string]string{"RAILS_ENV": "Development"}, wantErr: true},
		{name: "strong password in production", secret: "Xk9-f83jd_Lq02-zzP", env: map[string]string{"RAILS_ENV": "production"}},
		{name: "strong password, nothing set", secret: "Xk9-f83jd_Lq02-zzP"},
		{name: "short password", secret: "Xk9-f83jd", wantWarnings: []string{"only 9 characters"}},
		{name: "weak and short", secret: "DEVPASSWORD", wantWarnings: []string{"only 11 characters", "well-known weak"}},
		{name: "weak: changeme", secret: "ChangeMe", wantWarnings: []string{"only 8", "well-known weak"}},
		{name: "16 runes is long enough", secret: "éééééééééééééééé"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			warnings, err := StartupPolicy(tt.secret, env(tt.env))
			if (err != nil) != tt.wantErr {
				t.Fatalf("err = %v, wantErr %v", err, tt.wantErr)
			}
			if err != nil {
				msg := err.Error()
				for _, want := range []string{"RENDERER_PASSWORD", "RAILS_ENV=", "NODE_ENV="} {
					if !strings.Contains(msg, want) {
						t.Errorf("error %q does not mention %q", msg, want)
					}
				}
				return
			}
			if len(warnings) != len(tt.wantWarnings) {
				t.Fatalf("warnings = %q, want %d matching %q", warnings, len(tt.wantWarnings), tt.wantWarnings)
			}
			for i, w := range warnings {
				if !strings.Contains(w, tt.wantWarnings[i]) {
					t.Errorf("warning %d = %q, want it to contain %q", i, w, tt.wantWarnings[i])
				}
				if tt.secret != "" && strings.Contains(strings.ToLower(w), strings.ToLower(tt.secret)) {
					t.Errorf("warning %q leaks the password", w)
				}
			}
		})
	}
}

func TestIsSensitiveName(t *testing.T) {
	tests := []struct {
		name string
		want bool
	}{
		{"password", true}, {"Password", true}, {"PASSWORD", true}, {"password[]", true},
		{"token", true}, {"secret", true}, {"api_key", true}, {"api-key", true}, {"apikey", true},
		{"Authorization", true}, {"auth_token", true}, {"auth-token", true}, {"authtoken", true},
		{"access_token", true}, {"AccessToken", true}, {"bearer", true}, {"credentials", true},
		{"token[0]", true}, {" password ", true},
		{"protocolVersion", false}, {"renderingRequest", false}, {"gemVersion", false},
		{"passwords", false}, {"", false}, {"[]", false}, {"dependencyBundleTimestamps[]", false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := IsSensitiveName(tt.name); got != tt.want {
				t.Errorf("IsSensitiveName(%q) = %v, want %v", tt.name, got, tt.want)
			}
		})
	}
}
