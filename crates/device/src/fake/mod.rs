//! The fake adb server: the adb host protocol in front of a simulated phone.

mod device;
mod server;
mod sh;

pub use device::{FakeDevice, FakeOptions, FileStat, ShellOutput};
pub use server::{ADB_SERVER_VERSION, FEATURES, FakeAdbServer};
