//! adb: our client of the adb server's host protocol, and devices driven through it.

pub mod client;
pub mod device;
pub mod input;
pub mod wire;

pub use client::{AdbError, AdbServer, DeviceEntry, ShellResult};
pub use device::AdbDevice;
