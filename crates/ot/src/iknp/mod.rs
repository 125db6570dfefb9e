//! IKNP OT extension: the receiver's and sender's states and their steps (the crate
//! documentation gives the flow, the wire formats and the security argument). What the two
//! sides share, the hash key, the column PRGs and the chunk layout, is in `shared`.

mod receiver;
mod sender;
mod shared;

pub use receiver::{Chosen, Receiver, ReceiverExtension};
pub use sender::{Sender, SenderSetup};
pub use shared::HASH_KEY;
