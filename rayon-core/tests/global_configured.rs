//! The global pool configured before its first use: the free functions then
//! run on it, and a second configuration is refused with rayon's message.
//! One test in this binary, as the global pool is the process's.

use rayon_core::ThreadPoolBuilder;

#[test]
fn the_global_pool_takes_the_first_configuration() {
    ThreadPoolBuilder::new()
        .num_threads(2)
        .thread_name(|i| format!("global-{i}"))
        .build_global()
        .unwrap();
    assert_eq!(rayon_core::current_num_threads(), 2);
    let (name, _) = rayon_core::join(|| std::thread::current().name().map(str::to_owned), || ());
    assert!(name.unwrap().starts_with("global-"));
    assert_eq!(rayon_core::broadcast(|ctx| ctx.index()), [0, 1]);

    let error = ThreadPoolBuilder::new().build_global().unwrap_err();
    assert_eq!(
        error.to_string(),
        "The global thread pool has already been initialized."
    );
    assert_eq!(rayon_core::scope(|_| rayon_core::current_num_threads()), 2);
}
