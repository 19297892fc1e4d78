package handlers

import (
	"context"
	"errors"
	"maps"
	"net/http"
	"slices"
	"strings"

	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/codes"

	"github.com/gorender/gorender/bundles"
	"github.com/gorender/gorender/tracing"
)

// bundlePartPrefix names a file part carrying bundle <id> (PROTOCOL.md §6.1).
const bundlePartPrefix = "bundle_"

// stagedUpload is an upload with the sizes of its staged files.
type stagedUpload struct {
	bundles.Upload
	sizes map[string]int64 // by staged path
}

// uploadFromFiles sorts a request's file parts into bundles and companion
// files. legacyEntry, when set, is the id a part named "bundle" stands for
// (render route only).
func uploadFromFiles(files []StagedFile, legacyEntry string) (stagedUpload, *HTTPError) {
	if len(files) == 0 {
		return stagedUpload{}, nil // most renders: nothing to allocate
	}
	up := stagedUpload{Upload: bundles.Upload{Bundles: map[string]string{}}, sizes: map[string]int64{}}
	for _, f := range files {
		up.sizes[f.Path] = f.Size
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

// store writes an upload's bundles and companion files into the cache,
// every name checked first, then one bundle at a time in id order, each
// in a span of its own (ror.bundle.upload).
func (h *Handlers) store(ctx context.Context, up stagedUpload) *HTTPError {
	if len(up.Bundles) == 0 {
		return nil
	}
	if err := up.Validate(); err != nil {
		return storeFailure(err)
	}
	var assetBytes int64
	for _, a := range up.Assets {
		assetBytes += up.sizes[a.Path]
	}
	for _, id := range slices.Sorted(maps.Keys(up.Bundles)) {
		existed, err := h.storeBundle(ctx, up, id, assetBytes)
		if err != nil {
			return storeFailure(err)
		}
		if h.Metrics == nil {
			continue
		}
		if existed {
			h.Metrics.BundleUpload("existing")
		} else {
			h.Metrics.BundleUpload("stored")
		}
	}
	return nil
}

// storeBundle stores bundle id of up with up's companion files and reports
// whether the cache had it already.
func (h *Handlers) storeBundle(ctx context.Context, up stagedUpload, id string, assetBytes int64) (existed bool, err error) {
	ctx, span := h.startSpan(ctx, tracing.SpanBundleUpload, id)
	defer span.End()
	path := up.Bundles[id]
	res, err := h.Cache.Store(ctx, bundles.Upload{Bundles: map[string]string{id: path}, Assets: up.Assets})
	existed = len(res.Existing) > 0
	if span.IsRecording() {
		span.SetAttributes(
			tracing.BytesTotal.Int64(up.sizes[path]+assetBytes),
			attribute.Bool("gorender.bundle.existed", existed),
			attribute.Int("gorender.assets", len(up.Assets)),
		)
		if err != nil {
			span.SetStatus(codes.Error, "store failed")
		}
	}
	return existed, err
}

// storeFailure is the answer to a failed store.
func storeFailure(err error) *HTTPError {
	var invalid *bundles.InvalidNameError
	if errors.As(err, &invalid) {
		return badRequest("%s", echo(invalid.Error()))
	}
	return &HTTPError{Status: http.StatusInternalServerError, Body: "Internal error: could not store the uploaded bundles", Cause: err}
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
