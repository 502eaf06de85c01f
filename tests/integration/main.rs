//! The one integration test binary (ripgrep pattern). Each module names what it tests; the cheapest kinds
//! (fixtures, renderers) come first and the control-plane tests last.

mod common;

mod cli;
mod collect;
mod offline;
mod render;
mod runtime;

mod cluster;
mod controlplane;
mod krew;
mod live;
