import { useState } from "react";
import { addTodo, toggleTodo, remaining } from "./todos.js";

export default function App() {
  const [todos, setTodos] = useState([]);
  const [text, setText] = useState("");

  function submit(event) {
    event.preventDefault();
    setTodos(addTodo(todos, text));
    setText("");
  }

  return (
    <main>
      <h1>To do</h1>
      <form onSubmit={submit}>
        <input value={text} onChange={(e) => setText(e.target.value)} placeholder="What needs doing?" />
        <button type="submit">Add</button>
      </form>
      <ul>
        {todos.map((todo) => (
          <li key={todo.id}>
            <label>
              <input type="checkbox" checked={todo.done} onChange={() => setTodos(toggleTodo(todos, todo.id))} />
              {todo.text}
            </label>
          </li>
        ))}
      </ul>
      <p>{remaining(todos)} left</p>
    </main>
  );
}
