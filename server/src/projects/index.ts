// What other features may use of projects and their memberships.
export {
  addMember,
  allProjects,
  countAdmins,
  createProject,
  getProject,
  isMember,
  listMembers,
  lockMemberships,
  type Member,
  type Project,
  type ProjectUpdate,
  projectsOfUser,
  removeMember,
  roleInProject,
  setMemberRole,
  updateProject,
  userProjectIds,
} from './store.ts';
export { repoNameFor, repoNameOf, requireRepository } from './repo-name.ts';
export { type NewProject, newProjectSchema, presentProject, projectResponse, projectSchema } from './schema.ts';
