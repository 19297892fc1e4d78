package handlers

import (
	"context"
	"errors"
	"net/http"
	"strings"

	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/codes"

	"github.com/gorender/gorender/bundles"
	"github.com/gorender/gorender/tracing"
)

// bundlePartPrefix names a file part carrying bundle <id> (PROTOCOL.md §6.1).
const bundlePartPrefix = "bundle_"

// uploadFromFiles sorts a request's file parts into bundles and companion
// files. legacyEntry, when set, is the id a part named "bundle" stands for
// (render route only).
func uploadFromFiles(files []StagedFile, legacyEntry string) (bundles.Upload, *HTTPError) {
	up := bundles.Upload{Bundles: map[string]string{}}
	for _, f := range files {
		switch {
		case strings.HasPrefix(f.Field, bundlePartPrefix):
			id := strings.TrimPrefix(f.Field, bundlePartPrefix)
			if !bundles.ValidID(id) {
				return up, invalidBundleID(id)
			}
			up.Bundles[id] = f.Path
		case f.Field == "bundle" && legacyEntry != "":
			up.Bundles[legacyEntry] = f.Path
		default:
			if !bundles.ValidAssetName(f.Filename) {
				return up, badRequest("Invalid asset filename: %q. Expected a single filename, not a path.", echo(f.Filename))
			}
			up.Assets = append(up.Assets, bundles.Asset{Name: f.Filename, Path: f.Path})
		}
	}
	return up, nil
}

func invalidBundleID(id string) *HTTPError {
	return badRequest("Invalid bundle id: %q. %s.", echo(id), bundles.IDProblem(id))
}

// store writes an upload's bundles and companion files into the cache, in
// a span of its own.
func (h *Handlers) store(ctx context.Context, up bundles.Upload) *HTTPError {
	if len(up.Bundles) == 0 {
		return nil
	}
	ctx, span := tracing.Start(ctx, h.Tracer, "bundle store")
	defer span.End()
	res, err := h.Cache.Store(ctx, up)
	if span.IsRecording() {
		span.SetAttributes(
			attribute.StringSlice("gorender.bundles.stored", res.Stored),
			attribute.StringSlice("gorender.bundles.existing", res.Existing),
			attribute.Int("gorender.assets", len(up.Assets)),
		)
		if err != nil {
			span.SetStatus(codes.Error, "store failed")
		}
	}
	if err != nil {
		var invalid *bundles.InvalidNameError
		if errors.As(err, &invalid) {
			return badRequest("%s", echo(invalid.Error()))
		}
		return &HTTPError{Status: http.StatusInternalServerError, Body: "Internal error: could not store the uploaded bundles", Cause: err}
	}
	if h.Metrics != nil {
		for range res.Stored {
			h.Metrics.BundleUpload("stored")
		}
		for range res.Existing {
			h.Metrics.BundleUpload("existing")
		}
	}
	return nil
}

// UploadAssets serves POST /upload-assets: store bundles and companion files.
func (h *Handlers) UploadAssets(w http.ResponseWriter, r *http.Request) {
	body := h.guardBody(w, r)
	defer body.release()
	staging := &lazyStaging{cache: h.Cache}
	rp := h.uploadAssets(w, r, body, staging)
	staging.remove(h.Logger)
	rp.write(w, r)
}

func (h *Handlers) uploadAssets(w http.ResponseWriter, r *http.Request, body *guardedBody, staging *lazyStaging) reply {
	fields, herr := h.decode(w, r, h.decodeOptions(body, staging, true))
	if herr != nil {
		return h.logged(r, herr)
	}
	if herr := h.precheck(body, fields, true); herr != nil {
		return errorReply(herr)
	}
	h.noteGemVersion(r.Context(), fields)
	up, herr := uploadFromFiles(fields.Files, "")
	if herr != nil {
		return errorReply(herr)
	}
	if len(up.Bundles) == 0 {
		return errorReply(badRequest(`No bundle_<hash> fields provided. The /upload-assets endpoint requires at least one bundle file with a "bundle_<hash>" form key.`))
	}
	if herr := h.store(r.Context(), up); herr != nil {
		return h.logged(r, herr)
	}
	return textReply(http.StatusOK, "")
}

// logged logs an error answer that has a cause: a server-side failure as
// an error; a client's (a body cut off, stalled or refused) at debug level
// only, so that clients without the password cannot fill the logs.
func (h *Handlers) logged(r *http.Request, herr *HTTPError) reply {
	switch {
	case herr.Cause == nil:
	case herr.Status >= 500:
		h.Logger.ErrorContext(r.Context(), "request failed", "path", r.URL.Path, "status", herr.Status, "err", herr.Cause)
	default:
		h.Logger.DebugContext(r.Context(), "request refused", "path", r.URL.Path, "status", herr.Status, "err", herr.Cause)
	}
	return errorReply(herr)
}

// assetExistsResult is one target of /asset-exists.
type assetExistsResult struct {
	BundleHash string `json:"bundleHash"`
	Exists     bool   `json:"exists"`
}

// AssetExists serves POST /asset-exists?filename=NAME.
func (h *Handlers) AssetExists(w http.ResponseWriter, r *http.Request) {
	body := h.guardBody(w, r)
	defer body.release()
	h.assetExists(w, r, body).write(w, r)
}

func (h *Handlers) assetExists(w http.ResponseWriter, r *http.Request, body *guardedBody) reply {
	fields, herr := h.decode(w, r, h.decodeOptions(body, nil, false))
	if herr != nil {
		return h.logged(r, herr)
	}
	if herr := h.precheck(body, fields, false); herr != nil {
		return errorReply(herr)
	}
	name := r.URL.Query().Get("filename")
	if name == "" {
		return errorReply(badRequest("No filename provided. Pass the asset's name as the filename query parameter."))
	}
	if !bundles.ValidAssetName(name) {
		return errorReply(badRequest("Invalid asset filename: %q. Expected a single filename, not a path.", echo(name)))
	}
	targets, herr := ParseTargetBundles(fields)
	if herr != nil {
		return errorReply(herr)
	}
	results := make([]assetExistsResult, 0, len(targets))
	all := true
	for _, id := range targets {
		if !bundles.ValidID(id) {
			return errorReply(invalidBundleID(id))
		}
		exists := h.Cache.AssetExists(id, name)
		all = all && exists
		results = append(results, assetExistsResult{BundleHash: id, Exists: exists})
	}
	return jsonReply(http.StatusOK, struct {
		Exists  bool                `json:"exists"`
		Results []assetExistsResult `json:"results"`
	}{all, results})
}
