//! Short functions: no function of product code (the binary's `src/` and every crate's `src/`,
//! without their `#[cfg(test)]` modules and `#[test]` functions) is longer than
//! [`LONGEST_FUNCTION`] lines. The sources are parsed with `syn`, so free functions, methods of
//! impls, a trait's default methods and functions nested in other functions are all measured,
//! each from its `fn` line to its closing brace (a nested function counts in its parent too).

use crate::source_files::{crate_dirs, relative, root, rust_files};
use std::path::PathBuf;
use syn::spanned::Spanned;
use syn::visit::Visit;

/// The most lines a product function may span, from its `fn` line to its closing brace.
const LONGEST_FUNCTION: usize = 100;

/// The folders of product code: the binary's and each crate's `src/` (tests/ and benches/ are
/// not product code, and are not under `src/`).
fn product_dirs() -> Vec<PathBuf> {
    let mut dirs = vec![root().join("src")];
    dirs.extend(crate_dirs().into_iter().map(|c| c.join("src")).filter(|src| src.is_dir()));
    dirs
}

/// A function longer than the limit: its name, the line of its `fn` and how many lines it spans.
#[derive(Debug, PartialEq)]
struct LongFunction {
    name: String,
    line: usize,
    lines: usize,
}

/// Walks one parsed file and collects the functions over `limit` lines.
struct Measure {
    limit: usize,
    found: Vec<LongFunction>,
}

/// `#[cfg(test)]` or `#[test]`: test code, which the rule does not cover.
fn is_test_code(attrs: &[syn::Attribute]) -> bool {
    attrs.iter().any(|a| {
        a.path().is_ident("test")
            || (a.path().is_ident("cfg") && a.parse_args::<syn::Meta>().is_ok_and(|m| m.path().is_ident("test")))
    })
}

impl Measure {
    /// `sig.fn_token` to the block's closing brace: the function without its doc comment.
    fn measure(&mut self, sig: &syn::Signature, block: &syn::Block) {
        let first = sig.fn_token.span().start().line;
        let last = block.brace_token.span.close().end().line;
        let lines = last + 1 - first;
        if lines > self.limit {
            self.found.push(LongFunction { name: sig.ident.to_string(), line: first, lines });
        }
    }
}

impl<'ast> Visit<'ast> for Measure {
    fn visit_item_mod(&mut self, m: &'ast syn::ItemMod) {
        if !is_test_code(&m.attrs) {
            syn::visit::visit_item_mod(self, m);
        }
    }
    fn visit_item_impl(&mut self, i: &'ast syn::ItemImpl) {
        if !is_test_code(&i.attrs) {
            syn::visit::visit_item_impl(self, i);
        }
    }
    fn visit_item_fn(&mut self, f: &'ast syn::ItemFn) {
        if !is_test_code(&f.attrs) {
            self.measure(&f.sig, &f.block);
            syn::visit::visit_item_fn(self, f);
        }
    }
    fn visit_impl_item_fn(&mut self, f: &'ast syn::ImplItemFn) {
        if !is_test_code(&f.attrs) {
            self.measure(&f.sig, &f.block);
            syn::visit::visit_impl_item_fn(self, f);
        }
    }
    fn visit_trait_item_fn(&mut self, f: &'ast syn::TraitItemFn) {
        if let (false, Some(block)) = (is_test_code(&f.attrs), &f.default) {
            self.measure(&f.sig, block);
        }
        syn::visit::visit_trait_item_fn(self, f);
    }
}

/// The functions of `source`'s product code longer than `limit` lines.
fn long_functions(source: &str, limit: usize) -> Result<Vec<LongFunction>, syn::Error> {
    let file = syn::parse_file(source)?;
    let mut measure = Measure { limit, found: Vec::new() };
    measure.visit_file(&file);
    Ok(measure.found)
}

/// A function of `body_lines` lines of body, named `name`, indented by `indent`.
fn sample_fn(name: &str, indent: &str, body_lines: usize) -> String {
    let body: String = (0..body_lines).map(|i| format!("{indent}    let _x{i} = {i};\n")).collect();
    format!("{indent}fn {name}() {{\n{body}{indent}}}\n")
}

#[test]
fn the_check_finds_a_long_function_wherever_it_is() {
    // Two lines of signature and brace: a body of 99 lines makes 101.
    let free = sample_fn("too_long", "", 99);
    let fits = sample_fn("just_fits", "", 98);
    let method = format!("struct S;\nimpl S {{\n{}}}\n", sample_fn("long_method", "    ", 120));
    let default = format!("trait T {{\n{}}}\n", sample_fn("long_default", "    ", 101));
    let nested = format!("fn outer() {{\n{}}}\n", sample_fn("inner", "    ", 100));
    let tests = format!(
        "#[cfg(test)]\nmod tests {{\n{}}}\n#[test]\n{}",
        sample_fn("in_tests", "    ", 200),
        sample_fn("a_test", "", 200)
    );
    let source = [free, fits, method, default, nested, tests].concat();
    let found = long_functions(&source, LONGEST_FUNCTION).expect("the sample parses");
    let named: Vec<(&str, usize)> = found.iter().map(|f| (f.name.as_str(), f.lines)).collect();
    assert_eq!(
        named,
        [("too_long", 101), ("long_method", 122), ("long_default", 103), ("outer", 104), ("inner", 102)],
        "{found:?}"
    );
    assert_eq!(found[0].line, 1, "the line of `fn too_long`");
}

#[test]
fn no_product_function_is_over_100_lines() {
    let mut files: Vec<PathBuf> = product_dirs().iter().flat_map(|dir| rust_files(dir)).collect();
    files.sort();
    assert!(files.len() > 250, "the product code was read: {} files", files.len());
    let mut too_long = Vec::new();
    for file in &files {
        let relative = relative(file);
        let source = std::fs::read_to_string(file).unwrap_or_else(|e| panic!("{relative}: {e}"));
        let found = long_functions(&source, LONGEST_FUNCTION).unwrap_or_else(|e| panic!("{relative}: {e}"));
        too_long.extend(found.into_iter().map(|f| format!("{relative}:{}: `{}` is {} lines", f.line, f.name, f.lines)));
    }
    assert!(
        too_long.is_empty(),
        "{} product function(s) over {LONGEST_FUNCTION} lines; split each into well-named shorter ones:\n{}",
        too_long.len(),
        too_long.join("\n")
    );
}
