//! The viewer's own files, inside the binary: the machines it runs on are often offline. uPlot
//! (MIT, assets/uPlot.LICENSE) is bundled as its release's minified build (docs/viewer.md).

/// (name, content type, bytes).
const ASSETS: [(&str, &str, &[u8]); 4] = [
    ("viewer.css", "text/css; charset=utf-8", include_bytes!("../assets/viewer.css")),
    ("viewer.js", "text/javascript; charset=utf-8", include_bytes!("../assets/viewer.js")),
    ("uPlot.iife.min.js", "text/javascript; charset=utf-8", include_bytes!("../assets/uPlot.iife.min.js")),
    ("uPlot.min.css", "text/css; charset=utf-8", include_bytes!("../assets/uPlot.min.css")),
];

/// The asset's own name if `name` is one.
pub fn named(name: &str) -> Option<&'static str> {
    ASSETS.iter().find(|(n, _, _)| *n == name).map(|(n, _, _)| *n)
}

/// Its content type and bytes.
pub fn get(name: &str) -> Option<(&'static str, &'static [u8])> {
    ASSETS.iter().find(|(n, _, _)| *n == name).map(|(_, t, b)| (*t, *b))
}
