import { test } from "node:test";
import assert from "node:assert/strict";
import { addTodo, toggleTodo, remaining } from "./todos.js";

test("adds, toggles and counts", () => {
  let list = addTodo([], "write tests");
  list = addTodo(list, "  ");
  assert.equal(list.length, 1);
  list = toggleTodo(list, 1);
  assert.equal(remaining(list), 0);
});
