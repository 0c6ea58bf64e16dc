//! A program whose free functions first ran inside a pool of its own, and
//! then outside any pool: the global pool is built at that later call, and
//! with rayon's defaults (here `RAYON_NUM_THREADS`), not weft's. One test in
//! this binary, as the global pool is the process's.

use rayon_core::ThreadPoolBuilder;

#[test]
fn the_global_pool_built_after_free_functions_ran_in_a_pool_takes_rayons_defaults() {
    std::env::set_var("RAYON_NUM_THREADS", "3");
    let pool = ThreadPoolBuilder::new().num_threads(2).build().unwrap();
    let (a, b) = pool.install(|| rayon_core::join(|| 1, rayon_core::current_num_threads));
    assert_eq!((a, b), (1, 2));
    // Outside any pool now: the global pool is built here, with 3 threads
    // (weft's own default would ignore the variable).
    let (index, _) = rayon_core::join(rayon_core::current_thread_index, || ());
    assert!(index.unwrap() < 3);
    assert_eq!(rayon_core::current_num_threads(), 3);
    assert_eq!(rayon_core::broadcast(|ctx| ctx.num_threads()), [3, 3, 3]);
    assert!(ThreadPoolBuilder::new().build_global().is_err());
}
