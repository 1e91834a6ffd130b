package history_test

const question = "How is software testing studied, and how are language models given tools for chemistry?"
