// What other features may use of projects and their memberships.
export {
  addMember,
  allProjects,
  countAdmins,
  createProject,
  getProject,
  isMember,
  listMembers,
  type Member,
  type Project,
  projectsOfUser,
  removeMember,
  roleInProject,
  setMemberRole,
  userProjectIds,
} from './store.ts';
export { repoNameOf } from './repo-name.ts';
