package handlers

import (
	"reflect"
	"testing"
)

func TestParseRenderRequest(t *testing.T) {
	const invalidRR = "Invalid \"renderingRequest\" field in render request.\n"
	tests := []struct {
		name     string
		enc      encoded
		headers  []string
		want     *RenderRequest
		wantBody string
	}{
		{name: "json minimal", enc: encoded{MediaTypeJSON, `{"renderingRequest":"1+1"}`},
			want: &RenderRequest{RenderingRequest: "1+1"}},
		{name: "json missing", enc: encoded{MediaTypeJSON, `{"protocolVersion":"2.0.0","password":"pw"}`},
			wantBody: invalidRR + "Received type: undefined\nReceived fields: protocolVersion"},
		{name: "json number", enc: encoded{MediaTypeJSON, `{"renderingRequest":5}`},
			wantBody: invalidRR + "Received type: number\nReceived fields: renderingRequest"},
		{name: "json object", enc: encoded{MediaTypeJSON, `{"renderingRequest":{"a":1},"token":"x"}`},
			wantBody: invalidRR + "Received type: object\nReceived fields: renderingRequest"},
		{name: "json null", enc: encoded{MediaTypeJSON, `{"renderingRequest":null}`},
			wantBody: invalidRR + "Received type: object\nReceived fields: renderingRequest"},
		{name: "json bool", enc: encoded{MediaTypeJSON, `{"renderingRequest":true}`},
			wantBody: invalidRR + "Received type: boolean\nReceived fields: renderingRequest"},
		{name: "json empty", enc: encoded{MediaTypeJSON, `{"renderingRequest":""}`},
			wantBody: invalidRR + "Received type: string (empty)\nReceived fields: renderingRequest"},
		{name: "json none", enc: encoded{MediaTypeJSON, `{}`},
			wantBody: invalidRR + "Received type: undefined\nReceived fields: (none)"},
		{name: "json bad dependencies", enc: encoded{MediaTypeJSON, `{"renderingRequest":"x","dependencyBundleTimestamps":[1]}`},
			wantBody: `Invalid "dependencyBundleTimestamps" field in render request.`},
		{name: "json bad rsc", enc: encoded{MediaTypeJSON, `{"renderingRequest":"x","rscStreamObservability":"yes"}`},
			wantBody: `Invalid "rscStreamObservability" field in render request.`},
		{name: "json numeric gem version is informational", enc: encoded{MediaTypeJSON, `{"renderingRequest":"x","gemVersion":17,"railsEnv":"test"}`},
			want: &RenderRequest{RenderingRequest: "x", GemVersion: "17", RailsEnv: "test"}},
		{name: "form dependency as k", enc: encoded{MediaTypeForm, `renderingRequest=x&dependencyBundleTimestamps=a`},
			want: &RenderRequest{RenderingRequest: "x", DependencyBundleIDs: []string{"a"}}},
		{name: "form empty", enc: encoded{MediaTypeForm, `renderingRequest=&password=pw`},
			wantBody: invalidRR + "Received type: string (empty)\nReceived fields: renderingRequest"},
		{name: "raw empty body", enc: encoded{MediaTypeRawJS, ""}, headers: []string{headerProtocolVersion, "2.0.0"},
			wantBody: invalidRR + "Received type: string (empty)\nReceived fields: protocolVersion, renderingRequest"},
		{name: "raw dependency header not JSON", enc: encoded{MediaTypeRawJS, "x"}, headers: []string{headerDependencyBundle, "rorp-v2-r-1"},
			wantBody: "Invalid dependency bundle timestamps header: syntax error at byte offset 0"},
		{name: "raw dependency header object", enc: encoded{MediaTypeRawJS, "x"}, headers: []string{headerDependencyBundle, `{"a":"b"}`},
			wantBody: "Invalid dependency bundle timestamps header: expected a JSON array of strings"},
		{name: "raw dependency header numbers", enc: encoded{MediaTypeRawJS, "x"}, headers: []string{headerDependencyBundle, `["a",1]`},
			wantBody: "Invalid dependency bundle timestamps header: expected a JSON array of strings"},
		{name: "raw dependency header empty", enc: encoded{MediaTypeRawJS, "x"}, headers: []string{headerDependencyBundle, ``},
			wantBody: "Invalid dependency bundle timestamps header: empty value"},
		{name: "raw dependency header null", enc: encoded{MediaTypeRawJS, "x"}, headers: []string{headerDependencyBundle, `null`},
			wantBody: "Invalid dependency bundle timestamps header: expected a JSON array of strings"},
		{name: "raw dependency header ok", enc: encoded{MediaTypeRawJS, "x"}, headers: []string{headerDependencyBundle, ` ["a", "b"] `},
			want: &RenderRequest{RenderingRequest: "x", DependencyBundleIDs: []string{"a", "b"}}},
		{name: "raw rsc header invalid", enc: encoded{MediaTypeRawJS, "x"}, headers: []string{headerRSCObservability, "1"},
			wantBody: `Invalid "rscStreamObservability" field in render request.`},
		{name: "raw non-bearer", enc: encoded{MediaTypeRawJS, "x"}, headers: []string{"Authorization", "Token abc"},
			wantBody: "Invalid Authorization header for raw render request."},
		{name: "raw non-bearer reported before renderingRequest", enc: encoded{MediaTypeRawJS, ""}, headers: []string{"Authorization", "Token abc"},
			wantBody: "Invalid Authorization header for raw render request."},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			f, herr := decodeString(t, tt.enc.contentType, tt.enc.body, DecodeOptions{}, tt.headers...)
			if herr != nil {
				t.Fatalf("DecodeBody: %v", herr)
			}
			got, herr := ParseRenderRequest(f)
			if tt.wantBody != "" {
				wantHTTPError(t, herr, 400, tt.wantBody)
				return
			}
			if herr != nil {
				t.Fatalf("ParseRenderRequest: %v", herr)
			}
			if !reflect.DeepEqual(got, tt.want) {
				t.Fatalf("got %+v, want %+v", got, tt.want)
			}
		})
	}
}

func TestParseTargetBundles(t *testing.T) {
	const none = "No targetBundles provided. As of protocol version 2.0.0, targetBundles is required."
	tests := []struct {
		name     string
		enc      encoded
		want     []string
		wantBody string
	}{
		{"json array", encoded{MediaTypeJSON, `{"password":"pw","targetBundles":["a","b"]}`}, []string{"a", "b"}, ""},
		{"json brackets", encoded{MediaTypeJSON, `{"targetBundles[]":"a"}`}, []string{"a"}, ""},
		{"json missing", encoded{MediaTypeJSON, `{"password":"pw"}`}, nil, none},
		{"json empty array", encoded{MediaTypeJSON, `{"targetBundles":[]}`}, nil, none},
		{"json empty string", encoded{MediaTypeJSON, `{"targetBundles":""}`}, nil, none},
		{"json bad", encoded{MediaTypeJSON, `{"targetBundles":[true]}`}, nil, `Invalid "targetBundles" field in render request.`},
		{"form", encoded{MediaTypeForm, `targetBundles[]=a&targetBundles[]=b`}, []string{"a", "b"}, ""},
		{"multipart", encoded{multipartType, multipartPairs(t, "targetBundles[]", "a")}, []string{"a"}, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			f, herr := decodeString(t, tt.enc.contentType, tt.enc.body, DecodeOptions{})
			if herr != nil {
				t.Fatalf("DecodeBody: %v", herr)
			}
			got, herr := ParseTargetBundles(f)
			if tt.wantBody != "" {
				wantHTTPError(t, herr, 400, tt.wantBody)
				return
			}
			if herr != nil {
				t.Fatalf("ParseTargetBundles: %v", herr)
			}
			if !reflect.DeepEqual(got, tt.want) {
				t.Fatalf("got %q, want %q", got, tt.want)
			}
		})
	}
}
