fn main() {
    napi_build::setup();
    // The examples are probes of the core alone, built without the binding to run outside Node
    // (`--no-default-features`). Built with it, as `cargo test` builds every example, they must
    // still link: N-API's symbols, which Node provides to the addon, are left unresolved.
    if std::env::var("CARGO_CFG_TARGET_OS").as_deref() == Ok("linux") {
        println!("cargo:rustc-link-arg-examples=-Wl,--unresolved-symbols=ignore-all");
    }
}
