// Helpers of patches/datetimeformat-lazy-parse.new.js (gorender, see build.mjs).

// lazyField defines o[name] as compute()[i], computed when first read; a
// write replaces it with a plain value.
function lazyField(o, name, compute, i) {
	Object.defineProperty(o, name, {
		enumerable: true,
		configurable: true,
		get() {
			return compute()[i];
		},
		set(value) {
			Object.defineProperty(o, name, { value, writable: true, enumerable: true, configurable: true });
		}
	});
}

// skeletonFields are the fields a skeleton asks for ({year: "numeric", ...}):
// they depend on the skeleton alone, and locales share most skeletons.
const skeletonFieldsCache = new Map();
function skeletonFields(skeleton) {
	let fields = skeletonFieldsCache.get(skeleton);
	if (!fields) {
		fields = Object.create(null);
		replaceDateTimeTokens(skeleton, fields);
		skeletonFieldsCache.set(skeleton, fields);
	}
	return fields;
}
