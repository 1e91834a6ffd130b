package store

// maxSearchK bounds one vector search asked over the socket.
const maxSearchK = 1000
