export function addTodo(todos, text) {
  const trimmed = text.trim();
  if (!trimmed) return todos;
  const id = todos.reduce((max, t) => Math.max(max, t.id), 0) + 1;
  return [...todos, { id, text: trimmed, done: false }];
}

export function toggleTodo(todos, id) {
  return todos.map((t) => (t.id === id ? { ...t, done: !t.done } : t));
}

export function remaining(todos) {
  return todos.filter((t) => !t.done).length;
}
