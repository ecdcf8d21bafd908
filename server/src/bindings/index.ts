// What other features may use of repository bindings: whether a repository is bound to a project,
// the binding a project's setup makes, and the list its settings show.
export { bindingRoutes } from './routes.ts';
export { type Binding, type BindingHost, githubRepository, gitlabProject } from './schema.ts';
export { bindAtSetup, bindRepository, forgeRepositoryOf, isBound, unbindRepository } from './service.ts';
export { listBindings } from './store.ts';
